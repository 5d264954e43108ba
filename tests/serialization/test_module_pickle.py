"""pickle and copy.deepcopy of modules keep tied parameters tied and Parameter state right."""
import copy
import io
import pickle

import mindtorch_v2 as mt


def tied_model():
    m = mt.nn.Module()
    m.a = mt.nn.Linear(3, 3)
    m.b = mt.nn.Linear(3, 3)
    m.b.weight = m.a.weight
    m.a.bias.requires_grad_(False)
    return m


def check_copy(orig, got):
    assert got.b.weight is got.a.weight and got.a.weight is not orig.a.weight
    assert isinstance(got.a.weight, mt.nn.Parameter) and got.a.weight.requires_grad
    assert not got.a.bias.requires_grad
    assert (got.a.weight == orig.a.weight).all() and (got.b.bias == orig.b.bias).all()


def test_pickle_and_deepcopy_keep_tied_parameters():
    m = tied_model()
    check_copy(m, pickle.loads(pickle.dumps(m)))
    check_copy(m, copy.deepcopy(m))


def test_save_load_whole_module_and_state_dict_ties():
    m = tied_model()
    buf = io.BytesIO()
    mt.save(m, buf)
    buf.seek(0)
    check_copy(m, mt.load(buf, weights_only=False))
    buf = io.BytesIO()
    mt.save(m.state_dict(), buf)
    buf.seek(0)
    sd = mt.load(buf)
    assert sd["a.weight"].data_ptr() == sd["b.weight"].data_ptr()
