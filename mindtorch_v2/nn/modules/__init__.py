"""torch.nn.modules."""
from .module import Module  # noqa: F401
from .container import Container, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential  # noqa: F401
from .linear import Bilinear, Identity, LazyLinear, Linear  # noqa: F401
from .flatten import Flatten, Unflatten  # noqa: F401
from .lazy import LazyModuleMixin  # noqa: F401
from .activation import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .sparse import Embedding, EmbeddingBag  # noqa: F401
from ._multihead import MultiheadAttention  # noqa: F401
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer, TransformerEncoder,  # noqa: F401
                          TransformerEncoderLayer)
from .conv import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .padding import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .batchnorm import *  # noqa: F401,F403
from .instancenorm import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .distance import *  # noqa: F401,F403
from .adaptive import *  # noqa: F401,F403
from .linear_cross_entropy_options import LinearCrossEntropyOptions  # noqa: F401
