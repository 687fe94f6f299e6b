"""Recurrent layers: ptcore's packed float32 kernels vs its BLAS path vs PyTorch.

    python benchmarks/rnn_packed.py [--threads N] [--hidden 128 256] [--repeat R] [--cpu-time]

``nn.LSTM`` and ``nn.GRU`` (input 64, 2 layers, sequence 35, batch 20: the
language models of ``workloads_recurrent_gan.py``), forward alone (no_grad)
and forward + backward.  The packed kernels (``ptcore/_ops/kernels/include/ptc_rnn_packed.h``)
are switched off and on through ``ptcore._ops.kernels._rnn._set_packed`` in the same
process; the three variants are timed alternately (medians of ``--repeat``
rounds after 3 warm-up rounds), wall clock or, with ``--cpu-time``, the
process's CPU time (steadier on a loaded machine at 1 thread).

A second table times variable-length batches (``--sequences``: a
``PackedSequence`` of lengths 30 down to 4, batch 8, input and hidden 32,
2 layers), forward + backward of LSTM, bidirectional GRU, LSTM with
``proj_size``, and ``pack_padded_sequence`` / ``pad_packed_sequence``
(forward + backward) on 500 steps of 4 sequences, against PyTorch.
"""
import argparse
import warnings
import statistics
import time

import numpy as np


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--hidden", type=int, nargs="+", default=[128, 256])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--cpu-time", action="store_true")
    ap.add_argument("--sequences", action="store_true",
                    help="only the variable-length (PackedSequence) table")
    args = ap.parse_args()
    if args.sequences:
        sequences(args)
        return

    import torch
    import ptcore
    from ptcore.nn.functional import _rnn as R

    K = R._kernels()
    torch.set_num_threads(args.threads)
    ptcore.set_num_threads(args.threads)
    clock = time.process_time if args.cpu_time else time.perf_counter
    T, B, E, L = 35, 20, 64, 2
    print(f"threads {args.threads}; packed kernels on this CPU: {K._packed_available()} "
          f"(weight gradients: {K._packed_weight_grad_available()}); "
          f"{'CPU' if args.cpu_time else 'wall'} ms, medians of {args.repeat}")
    print("| layer | pass | packed | BLAS path | torch | packed/torch | BLAS/torch |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for H in args.hidden:
        for kind in ("LSTM", "GRU"):
            torch.manual_seed(0)
            mt = getattr(torch.nn, kind)(E, H, L)
            mp = getattr(ptcore.nn, kind)(E, H, L)
            with ptcore.no_grad():
                for pt, pp in zip(mt.parameters(), mp.parameters()):
                    pp.copy_(ptcore.from_numpy(pt.detach().numpy().copy()))
            x = np.random.default_rng(0).standard_normal((T, B, E)).astype(np.float32)
            xt, xp = torch.from_numpy(x), ptcore.from_numpy(x)

            def fwd_t():
                with torch.no_grad():
                    mt(xt)

            def fwd_p():
                with ptcore.no_grad():
                    mp(xp)

            def both_t():
                mt(xt)[0].sum().backward()

            def both_p():
                mp(xp)[0].sum().backward()

            for name, fp, ft in (("fwd", fwd_p, fwd_t), ("fwd+bwd", both_p, both_t)):
                times = {"packed": [], "blas": [], "torch": []}
                for _ in range(args.repeat + 3):
                    for key in times:
                        K._set_packed(key != "blas")
                        fn = ft if key == "torch" else fp
                        t0 = clock()
                        fn()
                        times[key].append(clock() - t0)
                K._set_packed(True)
                m = {k: statistics.median(v[3:]) * 1e3 for k, v in times.items()}
                print(f"| {kind} h{H} | {name} | {m['packed']:.2f} | {m['blas']:.2f} | "
                      f"{m['torch']:.2f} | {m['packed'] / m['torch']:.2f} | "
                      f"{m['blas'] / m['torch']:.2f} |")
    sequences(args)


def _copy_params(mt, mp):
    import ptcore
    with ptcore.no_grad():
        for pt, pp in zip(mt.parameters(), mp.parameters()):
            pp.copy_(ptcore.from_numpy(pt.detach().numpy().copy()))


def sequences(args):
    """Variable-length batches: ratios of ptcore's time to PyTorch's, timed alternately."""
    import torch
    import ptcore
    import ptcore.nn.utils.rnn as prnn
    import torch.nn.utils.rnn as trnn

    warnings.filterwarnings("ignore", "LSTM with projections")
    torch.set_num_threads(args.threads)
    ptcore.set_num_threads(args.threads)
    clock = time.process_time if args.cpu_time else time.perf_counter
    T, B, E, H = 30, 8, 32, 32
    lengths = np.linspace(T, 4, B).round().astype(np.int64)
    x = np.random.default_rng(0).standard_normal((T, B, E)).astype(np.float32)
    cases = []
    for label, kind, kw in (("LSTM packed", "LSTM", {}),
                            ("GRU bidir packed", "GRU", {"bidirectional": True}),
                            ("LSTM proj packed", "LSTM", {"proj_size": 16}),
                            ("LSTM proj padded", "LSTM", {"proj_size": 16})):
        torch.manual_seed(0)
        mt = getattr(torch.nn, kind)(E, H, 2, **kw)
        mp = getattr(ptcore.nn, kind)(E, H, 2, **kw)
        _copy_params(mt, mp)
        padded = "padded" in label

        def make(lib, rnn, m, padded=padded):
            xs = lib.from_numpy(x.copy())
            lens = lib.from_numpy(lengths.copy())

            def fn():
                inp = xs if padded else rnn.pack_padded_sequence(xs, lens)
                out = m(inp)[0]
                (out if padded else out.data).sum().backward()
            return fn
        cases.append((label + " fwd+bwd", make(ptcore, prnn, mp), make(torch, trnn, mt)))
    Tl = 500

    def make_pad(lib, rnn):
        xs = lib.randn(Tl * 4, 32, requires_grad=True)
        bs = lib.full((Tl,), 4, dtype=lib.int64)

        def fn():
            out, _ = rnn.pad_packed_sequence(rnn.PackedSequence(xs, bs), batch_first=True)
            out.sum().backward()
        return fn

    def make_pack(lib, rnn):
        xs = lib.randn(Tl, 4, 32, requires_grad=True)
        lens = lib.tensor([Tl, Tl - 1, Tl // 2, 3])

        def fn():
            rnn.pack_padded_sequence(xs, lens).data.sum().backward()
        return fn
    cases.append((f"pad_packed_sequence T={Tl} fwd+bwd", make_pad(ptcore, prnn),
                  make_pad(torch, trnn)))
    cases.append((f"pack_padded_sequence T={Tl} fwd+bwd", make_pack(ptcore, prnn),
                  make_pack(torch, trnn)))
    print(f"\nvariable-length sequences; threads {args.threads}; "
          f"{'CPU' if args.cpu_time else 'wall'} ms, medians of {args.repeat}")
    print("| case | ptcore | torch | ptcore/torch |")
    print("|---|---:|---:|---:|")
    for label, fp, ft in cases:
        times = {"p": [], "t": []}
        for _ in range(args.repeat + 3):
            for key, fn in (("p", fp), ("t", ft)):
                t0 = clock()
                fn()
                times[key].append(clock() - t0)
        m = {k: statistics.median(v[3:]) * 1e3 for k, v in times.items()}
        print(f"| {label} | {m['p']:.2f} | {m['t']:.2f} | {m['p'] / m['t']:.2f} |")


if __name__ == "__main__":
    main()
