"""``ptcore.nn.utils``: gradient clipping and parameter/vector conversion."""
from ptcore.nn.utils.clip_grad import (  # noqa: F401
    clip_grad_norm, clip_grad_norm_, clip_grad_value_, get_total_norm, clip_grads_with_norm_,
)
from ptcore.nn.utils.convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from ptcore.nn.utils import rnn  # noqa: F401
from ptcore.nn.utils.weight_norm import weight_norm, remove_weight_norm  # noqa: F401,E402
from ptcore.nn.utils import stateless  # noqa: F401,E402
from ptcore.nn.utils import parametrize  # noqa: F401,E402
from ptcore.nn.utils import parametrizations  # noqa: F401,E402
from ptcore.nn.utils.spectral_norm import spectral_norm, remove_spectral_norm  # noqa: F401,E402
from ptcore.nn.utils import fusion, init, memory_format  # noqa: F401,E402
from ptcore.nn.utils.fusion import (  # noqa: F401,E402
    fuse_conv_bn_eval, fuse_conv_bn_weights, fuse_linear_bn_eval, fuse_linear_bn_weights)
from ptcore.nn.utils.init import skip_init  # noqa: F401,E402
from ptcore.nn.utils.memory_format import (  # noqa: F401,E402
    convert_conv2d_weight_memory_format, convert_conv3d_weight_memory_format)
from ptcore.nn.utils import prune  # noqa: F401,E402

__all__ = [
    "clip_grad_norm", "clip_grad_norm_", "clip_grads_with_norm_", "clip_grad_value_",
    "convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format",
    "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval", "fuse_linear_bn_weights",
    "get_total_norm", "parameters_to_vector", "parametrizations", "parametrize",
    "remove_spectral_norm", "remove_weight_norm", "rnn", "skip_init", "spectral_norm",
    "stateless", "vector_to_parameters", "weight_norm",
]
