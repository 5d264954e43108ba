"""End-to-end training: a small CNN and an LSTM learn synthetic tasks (falling loss), and from the same seed
their loss curves equal PyTorch's to float32 rounding. (The MLP curve and DataLoader worker tests are in
test_data_testing_training.py.)"""
import numpy as np
import pytest

import mindtorch_v2 as mt

torch = pytest.importorskip("torch")


def _cnn(L):
    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = L.nn.Conv2d(1, 6, 3, padding=1)
            self.pool = L.nn.MaxPool2d(2)
            self.conv2 = L.nn.Conv2d(6, 8, 3, padding="same", padding_mode="reflect")
            self.gap = L.nn.AdaptiveAvgPool2d(2)
            self.fc = L.nn.Linear(32, 3)

        def forward(self, x):
            x = self.pool(L.nn.functional.relu(self.conv1(x)))
            x = self.gap(L.nn.functional.relu(self.conv2(x)))
            return self.fc(x.flatten(1))
    return Net()


def _cnn_data(L):
    # class = which third of the 12x12 image (left / middle / right columns) is bright
    y = L.randint(0, 3, (48,))
    x = L.randn(48, 1, 12, 12) * 0.3
    cols = L.arange(12).div(4, rounding_mode="floor")
    x = x + (cols.view(1, 1, 1, 12) == y.view(48, 1, 1, 1)).float()
    return x, y


def _lstm(L):
    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = L.nn.LSTM(2, 12, num_layers=2, batch_first=True, bidirectional=True)
            self.head = L.nn.Linear(24, 1)

        def forward(self, x):
            out, (h, c) = self.rnn(x)
            return self.head(out[:, -1]).squeeze(1)
    return Net()


def _lstm_data(L):
    # target = running sum of the first channel, read at the last step
    x = L.randn(32, 10, 2) * 0.5
    return x, x[:, :, 0].sum(1)


def _train(L, model_fn, data_fn, loss_fn, steps, lr):
    L.manual_seed(0)
    x, y = data_fn(L)
    model = model_fn(L)
    opt = L.optim.Adam(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(L, model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.fixture(autouse=True)
def _torch_one_thread():
    # PyTorch's thread pool thrashes on this 2-core machine for such tiny ops; the numbers do not change
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


CASES = {
    "cnn": (_cnn, _cnn_data, lambda L, out, y: L.nn.functional.cross_entropy(out, y), 25, 0.02),
    "lstm": (_lstm, _lstm_data, lambda L, out, y: L.nn.functional.mse_loss(out, y), 25, 0.02),
}


@pytest.mark.parametrize("case", list(CASES))
def test_training_loss_falls_and_matches_torch(case):
    lm = _train(mt, *CASES[case])
    lt = _train(torch, *CASES[case])
    assert lm[-1] < 0.5 * lm[0], lm  # it learns
    # the same data, weights and updates: the curves agree up to float32 rounding of different GEMMs
    np.testing.assert_allclose(lm, lt, rtol=2e-4, atol=1e-6)
