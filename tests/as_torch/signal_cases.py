"""Signal and image-quality libraries (julius, auraloss, pytorch-msssim, torchkbnufft), run by
tests/as_torch/test_signal_libraries.py with the real torch and under
``python -m ptcore.as_torch``: resampling, FIR filters and FFT convolution, spectral and
time-domain audio losses with their gradients, SSIM/MS-SSIM as values and as a training loss,
and non-uniform FFTs of complex images; inputs from NumPy.  Each case writes what it computed
to ``<out>/<case>.json``."""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main, normal_tensor

warnings.filterwarnings("ignore")


_x = normal_tensor


def julius_case():
    """julius: fractional resampling, low/high/band-pass filters (direct and FFT), FFT
    convolution, band splitting, with a gradient through the resampler."""
    import julius
    x = _x(1, (2, 1, 300)).requires_grad_()
    up = julius.resample_frac(x, 4, 5)
    down = julius.ResampleFrac(5, 3, zeros=12, rolloff=0.9)(x)
    (up.pow(2).sum() + down.sum()).backward()
    sig = _x(2, (3, 400))
    res = {"up": up, "down": down, "grad": x.grad,
           "low": julius.lowpass_filter(sig, 0.1),
           "low_fft": julius.lowpass_filter(sig, 0.05, fft=True),
           "lows": julius.lowpass_filters(sig, [0.05, 0.2, 0.3]),
           "high": julius.highpass_filter(sig, 0.2),
           "band": julius.bandpass_filter(sig, 0.1, 0.25),
           "bands": julius.split_bands(sig, 16000, n_bands=4)}
    w = _x(3, (4, 3, 17))
    res["fftconv"] = julius.fft_conv1d(_x(4, (2, 3, 128)), w, stride=2, padding=3)
    res["conv_ref"] = torch.nn.functional.conv1d(_x(4, (2, 3, 128)), w, stride=2, padding=3)
    return res


def auraloss_case():
    """auraloss: multi-resolution STFT, mel and sum-and-difference STFT losses, SI-SDR, SNR,
    ESR, DC and log-cosh, each with the gradient of its input; a 1-d conv net trained three
    Adam steps on the multi-resolution STFT loss."""
    import auraloss
    target = _x(5, (2, 1, 1024))
    losses = {"mrstft": auraloss.freq.MultiResolutionSTFTLoss(
                  fft_sizes=[128, 256, 64], hop_sizes=[32, 64, 16], win_lengths=[96, 256, 48]),
              # (no phase term: with centred frames the first frame is symmetric, so its
              # bins' imaginary parts are rounding noise and their phases +-pi by chance --
              # a 1-ulp difference in one window value flips them, in torch across CPUs too)
              "stft_lin": auraloss.freq.STFTLoss(fft_size=256, hop_size=64, win_length=256,
                                                 w_lin_mag=1.0),
              "mel": auraloss.freq.MelSTFTLoss(sample_rate=16000, fft_size=256, hop_size=64,
                                               win_length=256, n_mels=32)
              if _has_librosa() else None,
              "sisdr": auraloss.time.SISDRLoss(), "snr": auraloss.time.SNRLoss(),
              "esr": auraloss.time.ESRLoss(), "dc": auraloss.time.DCLoss(),
              "logcosh": auraloss.time.LogCoshLoss(), "sdsdr": auraloss.time.SDSDRLoss()}
    res = {}
    for name, fn in losses.items():
        if fn is None:
            continue
        pred = _x(6, (2, 1, 1024)).mul(0.5).add(target).requires_grad_()
        val = fn(pred, target)
        val.backward()
        res[name] = {"value": val, "grad": pred.grad}
    stereo = _x(7, (2, 2, 512)).requires_grad_()
    sd = auraloss.freq.SumAndDifferenceSTFTLoss(fft_sizes=[128, 64], hop_sizes=[32, 16],
                                                win_lengths=[128, 64])(stereo, _x(8, (2, 2, 512)))
    sd.backward()
    res["sum_diff"] = {"value": sd, "grad": stereo.grad}
    net = torch.nn.Sequential(torch.nn.Conv1d(1, 4, 9, padding=4), torch.nn.Tanh(),
                              torch.nn.Conv1d(4, 1, 9, padding=4))
    fill_normal(list(net.parameters()), 9, 0.2)
    opt = torch.optim.Adam(net.parameters(), lr=1e-2)
    loss_fn = losses["mrstft"]
    train = []
    for _ in range(3):
        opt.zero_grad()
        loss = loss_fn(net(target + 0.1), target)
        loss.backward()
        opt.step()
        train.append(loss.item())
    res["train"] = train
    return res


def _has_librosa():
    import importlib.util
    return importlib.util.find_spec("librosa") is not None


def msssim_case():
    """pytorch-msssim: SSIM and MS-SSIM (values, per-channel, non-negative), as modules and
    as a loss that a conv layer is trained on for three steps."""
    from pytorch_msssim import MS_SSIM, SSIM, ms_ssim, ssim
    a = _x(10, (2, 3, 64, 64)).sigmoid()
    b = (a + 0.1 * _x(11, (2, 3, 64, 64))).clamp(0, 1)
    res = {"ssim": ssim(a, b, data_range=1.0),
           "ssim_each": ssim(a, b, data_range=1.0, size_average=False),
           "ssim_nonneg": ssim(a, b, data_range=1.0, nonnegative_ssim=True, win_size=7),
           "ms_ssim": ms_ssim(a, b, data_range=1.0, win_size=3),
           "ms_ssim_w": ms_ssim(a, b, data_range=1.0, win_size=3,
                                weights=[0.3, 0.3, 0.2, 0.1, 0.1]),
           "module": SSIM(data_range=1.0, channel=3)(a, b),
           "ms_module": MS_SSIM(data_range=1.0, channel=3, win_size=3)(a, b)}
    conv = torch.nn.Conv2d(3, 3, 3, padding=1)
    fill_normal([conv.weight, conv.bias], 12, 0.1)
    opt = torch.optim.SGD(conv.parameters(), lr=0.5)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = 1 - ssim(torch.sigmoid(conv(b)), a, data_range=1.0)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    res["losses"], res["grad"] = losses, conv.weight.grad
    return res


def kbnufft_case():
    """torchkbnufft: forward and adjoint non-uniform FFTs (table interpolation) of a complex
    image, density compensation, the Toeplitz normal operator, gradients through the forward
    transform."""
    import torchkbnufft as tkbn
    im_size = (16, 16)
    rng = np.random.default_rng(13)
    ktraj = torch.from_numpy((rng.random((2, 60)) * 2 - 1).astype(np.float32) * np.pi)
    image = torch.complex(_x(14, (1, 1, *im_size)), _x(15, (1, 1, *im_size)))
    image.requires_grad_()
    nufft = tkbn.KbNufft(im_size=im_size)
    adj = tkbn.KbNufftAdjoint(im_size=im_size)
    kdata = nufft(image, ktraj)
    kdata.abs().sum().backward()
    with torch.no_grad():
        dcomp = tkbn.calc_density_compensation_function(ktraj=ktraj, im_size=im_size,
                                                        num_iterations=3)
        back = adj(kdata * dcomp, ktraj)
        toep = tkbn.ToepNufft()
        kernel = tkbn.calc_toeplitz_kernel(ktraj, im_size)
        normal = toep(image.detach(), kernel)
    return {"kdata": torch.view_as_real(kdata.detach()), "grad": torch.view_as_real(image.grad),
            "dcomp": dcomp, "back": torch.view_as_real(back),
            "normal": torch.view_as_real(normal)}


CASES = {"julius": julius_case, "auraloss": auraloss_case, "msssim": msssim_case,
         "kbnufft": kbnufft_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
