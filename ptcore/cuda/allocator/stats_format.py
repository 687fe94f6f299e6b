"""Formatting of the CUDA caching allocator's statistics: byte counts as
c10 prints them, the flat ``torch.cuda.memory_stats`` dict and the
``torch.cuda.memory_summary`` table."""
import collections

__all__ = ["format_size", "flatten_stats", "summary_from_stats"]


def format_size(size):
    """Human-readable byte count, exactly as c10's ``format_size``.

    Examples
    --------
    >>> format_size(1024), format_size(3 * 1048576)
    ('1024 bytes', '3.00 MiB')
    """
    if size <= 1024:
        return f"{size} bytes"
    if size <= 1048576:
        return f"{size / 1024.0:.2f} KiB"
    if size <= 1073741824:
        return f"{size / 1048576.0:.2f} MiB"
    return f"{size / 1073741824.0:.2f} GiB"


def flatten_stats(nested):
    """``memory_stats_as_nested_dict`` as the flat, key-sorted dict of
    ``torch.cuda.memory_stats`` (``"allocated_bytes.all.current"`` ...)."""
    result = []

    def rec(prefix, obj):
        if isinstance(obj, dict):
            if prefix:
                prefix += "."
            for k, v in obj.items():
                rec(prefix + ("_".join(map(str, k)) if isinstance(k, tuple) else str(k)), v)
        else:
            result.append((prefix, obj))

    rec("", nested)
    result.sort()
    return collections.OrderedDict(result)


def _format_size_summary(sz, pref_sz):
    prefixes = ["B  ", "KiB", "MiB", "GiB", "TiB", "PiB"]
    prefix = prefixes[0]
    for new_prefix in prefixes[1:]:
        if pref_sz < 768 * 1024:
            break
        prefix = new_prefix
        sz //= 1024
        pref_sz /= 1024
    return f"{sz:6d} {prefix}"


def _format_count(cnt, pref_cnt):
    prefixes = [" ", "K", "M"]
    prefix = prefixes[0]
    for new_prefix in prefixes[1:]:
        if pref_cnt < 750 * 1000:
            break
        prefix = new_prefix
        cnt //= 1000
        pref_cnt /= 1000
    return f"{cnt:7d} {prefix} "


def summary_from_stats(stats, device, abbreviated=False):
    """The ``torch.cuda.memory_summary`` table of a flat stats dict."""
    g = stats.get
    lines = ["=" * 75,
             f" {'':16} ptcore CUDA memory summary, device ID {device:<18d} ",
             "-" * 75,
             f"  {'':9} CUDA OOMs: {g('num_ooms', 0):<12d} | {'':6} cudaMalloc retries: "
             f"{g('num_alloc_retries', 0):<8d}  ",
             "=" * 75,
             "        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  "]
    metrics = [("allocated_bytes", "Allocated memory", _format_size_summary),
               ("active_bytes", "Active memory", _format_size_summary),
               ("requested_bytes", "Requested memory", _format_size_summary),
               ("reserved_bytes", "GPU reserved memory", _format_size_summary),
               ("inactive_split_bytes", "Non-releasable memory", _format_size_summary),
               ("allocation", "Allocations", _format_count),
               ("active", "Active allocs", _format_count),
               ("segment", "GPU reserved segments", _format_count),
               ("inactive_split", "Non-releasable allocs", _format_count)]
    for key, name, fmt in metrics:
        lines.append("-" * 75)
        subs = [("all", name)]
        if not abbreviated:
            subs += [("large_pool", "      from large pool"), ("small_pool", "      from small pool")]
        pref = None
        for sub, subname in subs:
            vals = [g(f"{key}.{sub}.{m}", 0) for m in ("current", "peak", "allocated", "freed")]
            if pref is None:
                pref = vals
            lines.append(f" {subname:<21} | " + " | ".join(fmt(v, p) for v, p in zip(vals, pref)) + " ")
    for key, name in (("oversize_allocations", "Oversize allocations"),
                      ("oversize_segments", "Oversize GPU segments")):
        lines.append("-" * 75)
        vals = [g(f"{key}.{m}", 0) for m in ("current", "peak", "allocated", "freed")]
        lines.append(f" {name:<21} | " + " | ".join(_format_count(v, v) for v in vals) + " ")
    lines.append("=" * 75)
    return "|" + "|\n|".join(lines) + "|\n"
