"""Spiking neural networks (snntorch), run by tests/as_torch/test_spiking.py with the real
torch and under ``python -m ptcore.as_torch``: neuron models stepped over time (Leaky with
each reset mechanism, Synaptic, Alpha, Lapicque, recurrent RLeaky and RSynaptic, SLSTM,
SConv2dLSTM, LeakyParallel) with surrogate gradients; spike encoders (latency, delta); a
convolutional spiking network with hidden state trained by backpropagation through time on
the rate-coded cross-entropy and the count MSE losses, with accuracy and quantized states.
Weights and data from NumPy.  Each case writes what it computed to ``<out>/<case>.json``."""
import sys
import warnings

import numpy as np
import torch

from case_results import fill_normal, main, normal_tensor

warnings.filterwarnings("ignore")


_x = normal_tensor


def neurons_case():
    """Each neuron model run over 6 steps on one input, the spikes and membranes, and the
    gradients of the summed membranes through each surrogate."""
    import snntorch as snn
    from snntorch import surrogate
    x0 = _x(1, (6, 3, 5), 1.5)
    res = {}
    grads = {"atan": surrogate.atan(), "fast_sigmoid": surrogate.fast_sigmoid(slope=10),
             "triangular": surrogate.triangular(), "sigmoid": surrogate.sigmoid(),
             "ste": surrogate.straight_through_estimator(),
             "sfs": surrogate.SFS(), "rate_escape": surrogate.spike_rate_escape()}
    for name, sg in grads.items():
        x = x0.clone().requires_grad_()
        lif = snn.Leaky(beta=0.8, spike_grad=sg)
        mem = lif.init_leaky()
        spk_rec, mem_rec = [], []
        for t in range(x.shape[0]):
            spk, mem = lif(x[t], mem)
            spk_rec.append(spk)
            mem_rec.append(mem)
        out = torch.stack(spk_rec).sum() + 0.1 * torch.stack(mem_rec).sum()
        out.backward()
        res[name] = {"spk": torch.stack(spk_rec), "mem": torch.stack(mem_rec), "grad": x.grad}
    models = {
        "leaky_zero": lambda: snn.Leaky(beta=torch.tensor([0.5, 0.9, 0.7, 0.6, 0.95]),
                                        reset_mechanism="zero", learn_beta=True),
        "leaky_none": lambda: snn.Leaky(beta=0.9, reset_mechanism="none", threshold=0.5,
                                        learn_threshold=True),
        "leaky_inhib": lambda: snn.Leaky(beta=0.9, inhibition=True),
        "synaptic": lambda: snn.Synaptic(alpha=0.7, beta=0.85, learn_alpha=True),
        "alpha": lambda: snn.Alpha(alpha=0.8, beta=0.6),
        "lapicque": lambda: snn.Lapicque(R=5.1, C=5e-3, time_step=1e-3),
    }
    for name, make in models.items():
        x = x0.clone().requires_grad_()
        neuron = make()
        outs = []
        st = None
        for t in range(x.shape[0]):
            if name == "synaptic":
                if st is None:
                    st = neuron.init_synaptic()
                spk, syn, mem = neuron(x[t], *st)
                st = (syn, mem)
            elif name == "alpha":
                if st is None:
                    st = neuron.init_alpha()
                spk, syn_exc, syn_inh, mem = neuron(x[t], *st)
                st = (syn_exc, syn_inh, mem)
            else:
                if st is None:
                    st = neuron.init_leaky() if hasattr(neuron, "init_leaky") else \
                        neuron.init_lapicque()
                spk, mem = neuron(x[t], st)
                st = mem
            outs.append(torch.cat([spk, mem], -1))
        rec = torch.stack(outs)
        rec.sum().backward()
        res[name] = {"out": rec, "grad": x.grad,
                     "param_grads": [p.grad for p in neuron.parameters()]}
    return res


def recurrent_case():
    """RLeaky, RSynaptic (all-to-all and one-to-one), SLSTM, SConv2dLSTM and LeakyParallel
    over a sequence, with the gradients of their weights."""
    import snntorch as snn
    res = {}
    torch.manual_seed(0)
    x0 = _x(2, (5, 2, 4))
    mods = {"rleaky": snn.RLeaky(beta=0.9, linear_features=4),
            "rleaky_1to1": snn.RLeaky(beta=0.9, all_to_all=False, V=0.5, learn_recurrent=True),
            "rsynaptic": snn.RSynaptic(alpha=0.6, beta=0.9, linear_features=4),
            "slstm": snn.SLSTM(4, 3)}
    for name, m in mods.items():
        fill_normal(list(m.parameters()), seed=3, scale=0.5)
        x = x0.clone().requires_grad_()
        if name.startswith("rleaky"):
            spk, mem = m.init_rleaky()
            st = (spk, mem)
        elif name == "rsynaptic":
            st = m.init_rsynaptic()
        else:
            st = m.init_slstm()
        outs = []
        for t in range(x.shape[0]):
            spk, *st = m(x[t], *st)
            if name.startswith("rleaky"):
                st = (spk, st[0])
            outs.append(torch.cat([spk, *st], -1))
        rec = torch.stack(outs)
        rec.pow(2).sum().backward()
        res[name] = {"out": rec, "grad": x.grad,
                     "param_grads": [p.grad for p in m.parameters()]}
    conv = snn.SConv2dLSTM(in_channels=1, out_channels=2, kernel_size=3, max_pool=2)
    fill_normal(list(conv.parameters()), seed=4, scale=0.5)
    img = _x(5, (3, 2, 1, 6, 6)).requires_grad_()
    syn, mem = conv.init_sconv2dlstm()
    outs = []
    for t in range(img.shape[0]):
        spk, syn, mem = conv(img[t], syn, mem)
        outs.append(mem)
    rec = torch.stack(outs)
    rec.sum().backward()
    res["sconv2dlstm"] = {"mem": rec, "grad": img.grad,
                          "param_grads": [p.grad for p in conv.parameters()]}
    par = snn.LeakyParallel(input_size=4, hidden_size=3, beta=0.9, learn_beta=True)
    fill_normal(list(par.parameters()), seed=6, scale=0.5)
    x = x0.clone().requires_grad_()
    out = par(x)
    out.sum().backward()
    res["leaky_parallel"] = {"out": out, "grad": x.grad}
    return res


def encoders_case():
    """Latency coding (linear and log, normalized, clipped), delta modulation, one-hot
    targets and rate targets."""
    from snntorch import spikegen
    data = torch.from_numpy(np.random.default_rng(7).random((4, 6)).astype(np.float32))
    res = {
        "latency": spikegen.latency(data, num_steps=10, tau=5, threshold=0.01, normalize=True),
        "latency_linear": spikegen.latency(data, num_steps=10, threshold=0.05, linear=True,
                                           normalize=True, clip=True),
        "latency_first": spikegen.latency(data, num_steps=10, first_spike_time=2,
                                          normalize=True, linear=True),
        "delta": spikegen.delta(_x(8, (8, 5)), threshold=0.3),
        "delta_off": spikegen.delta(_x(8, (8, 5)), threshold=0.3, off_spike=True,
                                    padding=True),
        "one_hot": spikegen.to_one_hot(torch.tensor([0, 3, 1, 2]), 4),
        "targets_rate": spikegen.targets_rate(torch.tensor([0, 3, 1]), num_classes=4),
    }
    return res


def training_case():
    """A convolutional spiking network (Leaky layers holding their hidden state) trained 3
    Adam steps by backpropagation through time on rate-coded cross-entropy, then 2 on the
    count MSE loss; the losses, accuracies, spike counts and final weights."""
    import snntorch as snn
    import snntorch.functional as SF
    from snntorch import surrogate, utils
    import torch.nn as nn
    sg = surrogate.fast_sigmoid(slope=25)
    net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.MaxPool2d(2),
                        snn.Leaky(beta=0.5, spike_grad=sg, init_hidden=True),
                        nn.Conv2d(4, 6, 3), nn.MaxPool2d(2),
                        snn.Leaky(beta=0.5, spike_grad=sg, init_hidden=True),
                        nn.Flatten(), nn.Linear(6, 3),
                        snn.Leaky(beta=0.5, spike_grad=sg, init_hidden=True, output=True))
    fill_normal(list(net.parameters()), seed=9, scale=0.6)
    data = torch.from_numpy(np.random.default_rng(10).random((5, 4, 1, 10, 10))
                            .astype(np.float32)) * 2
    targets = torch.tensor([0, 2, 1, 2])

    def forward():
        utils.reset(net)
        spk_rec, mem_rec = [], []
        for t in range(data.shape[0]):
            spk, mem = net(data[t])
            spk_rec.append(spk)
            mem_rec.append(mem)
        return torch.stack(spk_rec), torch.stack(mem_rec)

    opt = torch.optim.Adam(net.parameters(), lr=5e-2)
    losses, accs = [], []
    for loss_fn in [SF.ce_rate_loss()] * 3 + [SF.mse_count_loss(correct_rate=0.8,
                                                                 incorrect_rate=0.2)] * 2:
        spk, mem = forward()
        loss = loss_fn(spk, targets)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
        accs.append(SF.accuracy_rate(spk, targets))
    spk, mem = forward()
    from snntorch.functional.quant import state_quant
    from snntorch.functional.reg import l1_rate_sparsity
    quant = state_quant(num_bits=4, uniform=True, threshold=1)
    reg = l1_rate_sparsity(Lambda=1e-2)
    return {"losses": losses, "accs": accs, "spk": spk, "mem": mem, "quant": quant(mem),
            "max_membrane": SF.ce_max_membrane_loss()(mem, targets),
            "mse_membrane": SF.mse_membrane_loss()(mem, targets), "l1": reg(spk),
            "weights": [p.detach() for p in net.parameters()]}


CASES = {"neurons": neurons_case, "recurrent": recurrent_case, "encoders": encoders_case,
         "training": training_case}

if __name__ == "__main__":
    main(CASES, sys.argv)
