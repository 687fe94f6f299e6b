"""Spectral front ends (nnAudio, asteroid-filterbanks, torch-dct), run by
tests/as_torch/test_audio_features.py with the real torch and under
``python -m ptcore.as_torch``: STFT, mel, MFCC and constant-Q spectrograms computed by
convolution with the libraries' kernels, inverse STFT, analysis/synthesis filterbanks with
learnable sinc filters trained a few steps, and discrete cosine transforms through the FFT;
signals and weights from NumPy.  Each case writes what it computed to ``<out>/<case>.json``."""
import sys
import warnings

import torch

from case_results import main, normal_tensor

warnings.filterwarnings("ignore")


_x = normal_tensor


def nnaudio_case():
    """nnAudio: STFT (magnitude, complex, phase), its inverse, mel spectrogram, MFCC and
    CQT (1992v2), with the gradient of the signal through the mel spectrogram; a trainable
    STFT kernel stepped once."""
    from nnAudio import features
    sig = _x(1, (2, 2048))
    sr = 8000
    stft = features.STFT(n_fft=256, hop_length=64, sr=sr, output_format="Complex",
                         verbose=False)
    spec = stft(sig)
    res = {"stft": spec,
           "mag": features.STFT(n_fft=256, hop_length=64, sr=sr, output_format="Magnitude",
                                verbose=False)(sig),
           "phase": features.STFT(n_fft=128, hop_length=32, sr=sr, output_format="Phase",
                                  verbose=False)(sig)}
    istft = features.iSTFT(n_fft=256, hop_length=64, sr=sr, verbose=False)
    res["istft"] = istft(spec, onesided=True, length=2048)
    x = sig.clone().requires_grad_()
    mel = features.MelSpectrogram(sr=sr, n_fft=256, n_mels=32, hop_length=64, verbose=False)
    m = mel(x)
    m.log1p().sum().backward()
    res.update(mel=m, mel_grad=x.grad,
               mfcc=features.MFCC(sr=sr, n_mfcc=13, n_fft=256, n_mels=32, hop_length=64,
                                  verbose=False)(sig),
               cqt=features.CQT1992v2(sr=sr, hop_length=64, fmin=110, n_bins=24,
                                      bins_per_octave=12, verbose=False)(sig))
    trainable = features.STFT(n_fft=128, hop_length=32, sr=sr, trainable=True,
                              output_format="Magnitude", verbose=False)
    opt = torch.optim.SGD(trainable.parameters(), lr=1e-3)
    loss = trainable(sig).mean()
    loss.backward()
    opt.step()
    res["trainable"] = {"loss": loss, "kernels": [p.detach() for p in trainable.parameters()]}
    return res


def asteroid_case():
    """asteroid-filterbanks: STFT and parametrised sinc filterbank encoders and
    decoders; the sinc encoder's cut-off frequencies trained three Adam steps on a
    reconstruction loss; magnitude/phase transforms."""
    from asteroid_filterbanks import Decoder, Encoder, ParamSincFB, make_enc_dec, transforms
    sig = _x(2, (2, 1, 807))     # (a whole number of strides past the kernel)
    res = {}
    enc, dec = make_enc_dec("stft", n_filters=64, kernel_size=64, stride=16)
    tf = enc(sig)
    res["stft"] = {"tf": tf, "back": dec(tf), "mag": transforms.mag(tf),
                   "angle": transforms.angle(tf)}
    sinc_enc = Encoder(ParamSincFB(n_filters=32, kernel_size=31, stride=8, sample_rate=8000))
    sinc_dec = Decoder(ParamSincFB(n_filters=32, kernel_size=31, stride=8, sample_rate=8000))
    opt = torch.optim.Adam(sinc_enc.parameters(), lr=1e-2)
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = (sinc_dec(sinc_enc(sig)) - sig).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    res["sinc"] = {"losses": losses, "params": [p.detach() for p in sinc_enc.parameters()],
                   "filters": sinc_enc.filterbank.filters().detach()}
    return res


def dct_case():
    """torch-dct: DCT-I and DCT-II (norm None/ortho) and their inverses in 1 to 3 dimensions,
    LinearDCT layers, a gradient through dct_2d."""
    import torch_dct as dct
    x = _x(3, (3, 8, 6)).requires_grad_()
    y = dct.dct_2d(x, norm="ortho")
    (y * _x(4, y.shape)).sum().backward()
    v = _x(5, (4, 10))
    lin = dct.LinearDCT(10, "dct", norm="ortho")
    return {"dct": dct.dct(v), "dct_ortho": dct.dct(v, norm="ortho"),
            "idct": dct.idct(dct.dct(v)), "dct1": dct.dct1(v), "idct1": dct.idct1(dct.dct1(v)),
            "dct_2d": y, "grad": x.grad, "idct_3d": dct.idct_3d(dct.dct_3d(x.detach())),
            "linear": lin(v), "linear_2d": dct.apply_linear_2d(x.detach()[..., :6, :6],
                                                               dct.LinearDCT(6, "idct"))}


CASES = {"nnaudio": nnaudio_case, "asteroid": asteroid_case, "dct": dct_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
