"""The environment report to paste into a bug report (``torch.utils.collect_env``).

``python -m ptcore.utils.collect_env`` prints the ptcore and Python versions,
the OS, compilers, the CPU, the CUDA driver and GPUs when present, and the
versions of the related pip/conda packages.  :func:`get_env_info` returns the
same facts as a :class:`SystemEnv` named tuple with torch's field names
(``torch_version`` holds ptcore's version).  Every external command runs with
a timeout; what cannot be found reads ``None`` ("Could not collect").
"""
from collections import namedtuple
import locale
import os
import platform
import re
import subprocess
import sys

__all__ = ["SystemEnv", "get_env_info", "get_pretty_env_info", "main", "run",
           "run_and_read_all", "run_and_parse_first_match", "get_gcc_version",
           "get_clang_version", "get_cmake_version", "get_os", "get_libc_version",
           "get_python_platform", "get_pip_packages", "get_conda_packages", "get_cpu_info",
           "get_nvidia_driver_version", "get_gpu_info", "pretty_str"]

SystemEnv = namedtuple("SystemEnv", [
    "torch_version", "is_debug_build", "cuda_compiled_version", "gcc_version",
    "clang_version", "cmake_version", "os", "libc_version", "python_version",
    "python_platform", "is_cuda_available", "cuda_runtime_version", "cuda_module_loading",
    "nvidia_driver_version", "nvidia_gpu_models", "cudnn_version", "is_xpu_available",
    "pip_version", "pip_packages", "conda_packages", "hip_compiled_version",
    "hip_runtime_version", "miopen_runtime_version", "caching_allocator_config",
    "is_xnnpack_available", "cpu_info",
])

# the packages whose versions matter to a ptcore report
_PACKAGE_PATTERNS = ["ptcore", "torch", "numpy", "scipy", "mpi4py", "cuda-python",
                     "cuda-bindings", "nvidia", "cupy", "onnx", "cython", "meson",
                     "optree", "triton", "mypy", "flake8"]


def run(command, timeout=30):
    """Run ``command`` (a list, or a string for the shell); return
    ``(returncode, stdout, stderr)``, with returncode -1 when it cannot run."""
    shell = isinstance(command, str)
    try:
        p = subprocess.run(command, shell=shell, capture_output=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return -1, "", ""
    enc = "oem" if sys.platform == "win32" else locale.getpreferredencoding(False)
    try:
        return p.returncode, p.stdout.decode(enc).strip(), p.stderr.decode(enc).strip()
    except (LookupError, UnicodeDecodeError):
        return (p.returncode, p.stdout.decode("utf-8", "replace").strip(),
                p.stderr.decode("utf-8", "replace").strip())


def run_and_read_all(run_lambda, command):
    """Stdout of ``command``, or None if it fails."""
    rc, out, _ = run_lambda(command)
    return out if rc == 0 else None


def run_and_parse_first_match(run_lambda, command, regex):
    """The first group of ``regex`` in the stdout of ``command``, or None."""
    rc, out, _ = run_lambda(command)
    if rc != 0:
        return None
    m = re.search(regex, out)
    return m.group(1) if m else None


def run_and_return_first_line(run_lambda, command):
    rc, out, _ = run_lambda(command)
    return out.split("\n")[0] if rc == 0 and out else None


def get_gcc_version(run_lambda=run):
    return run_and_parse_first_match(run_lambda, ["gcc", "--version"], r"gcc (.*)")


def get_clang_version(run_lambda=run):
    return run_and_parse_first_match(run_lambda, ["clang", "--version"], r"clang version (.*)")


def get_cmake_version(run_lambda=run):
    return run_and_parse_first_match(run_lambda, ["cmake", "--version"], r"cmake (.*)")


def get_nvidia_driver_version(run_lambda=run):
    return run_and_parse_first_match(run_lambda, ["nvidia-smi"], r"Driver Version: (\S+)")


def get_gpu_info(run_lambda=run):
    """``nvidia-smi -L``'s list of GPUs, without their UUIDs."""
    out = run_and_read_all(run_lambda, ["nvidia-smi", "-L"])
    if out is None:
        return None
    return re.sub(r" \(UUID: .+?\)", "", out)


def get_running_cuda_version(run_lambda=run):
    return run_and_parse_first_match(run_lambda, ["nvcc", "--version"], r"release .+ V(.*)")


def get_libc_version():
    if not sys.platform.startswith("linux"):
        return "N/A"
    return "-".join(platform.libc_ver())


def get_python_platform():
    return platform.platform()


def get_os(run_lambda=run):
    """The OS name and machine, e.g. ``Debian GNU/Linux 12 (bookworm) (x86_64)``."""
    machine = platform.machine()
    if sys.platform.startswith("linux"):
        name = None
        try:
            with open("/etc/os-release", encoding="utf-8") as f:
                for line in f:
                    if line.startswith("PRETTY_NAME="):
                        name = line.split("=", 1)[1].strip().strip('"')
                        break
        except OSError:
            pass
        return f"{name or platform.platform()} ({machine})"
    if sys.platform == "darwin":
        return f"macOS {platform.mac_ver()[0]} ({machine})"
    if sys.platform == "win32":
        return f"{platform.system()} {platform.release()} ({machine})"
    return f"{platform.system()} ({machine})"


def get_cpu_info(run_lambda=run):
    """``lscpu`` on Linux; the processor name elsewhere."""
    if sys.platform.startswith("linux"):
        out = run_and_read_all(run_lambda, ["lscpu"])
        if out is not None:
            return out
    return platform.processor() or None


def _filter(out):
    if out is None:
        return None
    keep = [line for line in out.splitlines()
            if any(p in line.lower() for p in _PACKAGE_PATTERNS)]
    return "\n".join(keep)


def get_pip_packages(run_lambda=run, patterns=None):
    """``(pip version, the related packages of pip list --format=freeze)``."""
    rc, out, _ = run_lambda([sys.executable, "-mpip", "list", "--format=freeze"])
    ver_rc, ver, _ = run_lambda([sys.executable, "-mpip", "--version"])
    pip_version = "pip3" if sys.version_info[0] == 3 else "pip"
    if ver_rc == 0 and ver:
        pip_version = f"{pip_version} ({ver.split()[1]})" if len(ver.split()) > 1 else pip_version
    return pip_version, (_filter(out) if rc == 0 else None)


def get_conda_packages(run_lambda=run, patterns=None):
    conda = os.environ.get("CONDA_EXE", "conda")
    return _filter(run_and_read_all(run_lambda, [conda, "list"]))


def _cuda_facts():
    """(is_available, device names) from ptcore.cuda, without failing the report."""
    try:
        # lazy: the report is written even where ptcore.cuda fails to import
        import ptcore.cuda as cuda
        avail = bool(cuda.is_available())
        names = [cuda.get_device_name(i) for i in range(cuda.device_count())] if avail else []
        return avail, names
    except Exception:       # noqa: BLE001 - a report must not fail on a broken driver
        return False, []


def get_env_info():
    """The facts of :func:`get_pretty_env_info` as a :class:`SystemEnv`."""
    import ptcore
    pip_version, pip_list = get_pip_packages(run)
    cuda_available, gpu_names = _cuda_facts()
    gpus = get_gpu_info(run)
    if gpus is None and gpu_names:
        gpus = "\n".join(f"GPU {i}: {n}" for i, n in enumerate(gpu_names))
    sys_version = sys.version.replace("\n", " ")
    return SystemEnv(
        torch_version=str(ptcore.__version__),
        is_debug_build=False,
        cuda_compiled_version="N/A (kernels are compiled at run time by NVRTC)",
        gcc_version=get_gcc_version(run),
        clang_version=get_clang_version(run),
        cmake_version=get_cmake_version(run),
        os=get_os(run),
        libc_version=get_libc_version(),
        python_version=f"{sys_version} ({sys.maxsize.bit_length() + 1}-bit runtime)",
        python_platform=get_python_platform(),
        is_cuda_available=cuda_available,
        cuda_runtime_version=get_running_cuda_version(run),
        cuda_module_loading=os.environ.get("CUDA_MODULE_LOADING", "N/A") if cuda_available
        else "N/A",
        nvidia_driver_version=get_nvidia_driver_version(run),
        nvidia_gpu_models=gpus,
        cudnn_version=None,                  # ptcore does not use cuDNN
        is_xpu_available=False,
        pip_version=pip_version,
        pip_packages=pip_list,
        conda_packages=get_conda_packages(run),
        hip_compiled_version="N/A",
        hip_runtime_version="N/A",
        miopen_runtime_version="N/A",
        caching_allocator_config=os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
        is_xnnpack_available=False,
        cpu_info=get_cpu_info(run),
    )


env_info_fmt = """
ptcore version: {torch_version}
Is debug build: {is_debug_build}
CUDA used to build ptcore: {cuda_compiled_version}
ROCM used to build ptcore: {hip_compiled_version}

OS: {os}
GCC version: {gcc_version}
Clang version: {clang_version}
CMake version: {cmake_version}
Libc version: {libc_version}

Python version: {python_version}
Python platform: {python_platform}
Is CUDA available: {is_cuda_available}
CUDA runtime version: {cuda_runtime_version}
CUDA_MODULE_LOADING set to: {cuda_module_loading}
GPU models and configuration: {nvidia_gpu_models}
Nvidia driver version: {nvidia_driver_version}
cuDNN version: {cudnn_version}
Is XPU available: {is_xpu_available}
HIP runtime version: {hip_runtime_version}
MIOpen runtime version: {miopen_runtime_version}
Is XNNPACK available: {is_xnnpack_available}
Caching allocator config: {caching_allocator_config}

CPU:
{cpu_info}

Versions of relevant libraries:
{pip_packages}
{conda_packages}
""".strip()


def pretty_str(envinfo):
    """:data:`env_info_fmt` filled from ``envinfo`` (torch's layout, naming ptcore)."""
    d = envinfo._asdict()
    for k, v in d.items():
        if v is None:
            d[k] = "Could not collect"
        elif v is True:
            d[k] = "True"
        elif v is False:
            d[k] = "False"
    if envinfo.caching_allocator_config == "":
        d["caching_allocator_config"] = "N/A"

    def prepend(text, tag):
        return "\n".join(f"{tag} {line}" for line in text.split("\n"))
    if envinfo.pip_packages:
        d["pip_packages"] = prepend(envinfo.pip_packages, f"[{envinfo.pip_version}]")
    else:
        d["pip_packages"] = "No relevant packages"
    d["conda_packages"] = (prepend(envinfo.conda_packages, "[conda]")
                           if envinfo.conda_packages else "")
    return env_info_fmt.format(**d).rstrip()


def get_pretty_env_info():
    """The environment report as text."""
    return pretty_str(get_env_info())


def main():
    print("Collecting environment information...")
    print(get_pretty_env_info())


if __name__ == "__main__":
    main()
