"""set_default_tensor_type with a CUDA legacy type sets the default device as
well as the dtype, as torch's (it set the dtype only: tensors stayed on the
CPU); a CPU type afterwards puts the default device back."""
import warnings

import ptcore


def test_cuda_tensor_types_set_the_device():
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ptcore.set_default_tensor_type(ptcore.cuda.FloatTensor)
            x = ptcore.zeros(2)
            assert x.device.type == "cuda" and x.dtype == ptcore.float32
            ptcore.set_default_tensor_type("torch.cuda.DoubleTensor")
            x = ptcore.tensor([1.5])
            assert x.device.type == "cuda" and x.dtype == ptcore.float64
            ptcore.set_default_tensor_type(ptcore.FloatTensor)
            x = ptcore.zeros(2)
            assert x.device.type == "cpu" and x.dtype == ptcore.float32
    finally:
        ptcore.set_default_device(None)
        ptcore.set_default_dtype(ptcore.float32)
