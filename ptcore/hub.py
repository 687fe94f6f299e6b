"""``ptcore.hub``: load models from a directory or GitHub repository with a
``hubconf.py``, and checkpoints from URLs into a local cache (``torch.hub``).

The cache lives under :func:`get_dir`: ``$PTCORE_HOME/hub`` (``PTCORE_HOME``
defaults to ``$TORCH_HOME`` when that is set, else ``$XDG_CACHE_HOME/ptcore``,
``~/.cache/ptcore``), or the directory given to :func:`set_dir`.
Downloaded checkpoints go to ``<hub dir>/checkpoints`` and are read with
:func:`ptcore.load`; a file already there is loaded without any download.
Any URL scheme ``urllib`` opens works (``https://``, ``file://`` ...).
"""
import contextlib
import errno
import hashlib
import importlib.util
import json
import os
import re
import shutil
import sys
import tempfile
import uuid
import warnings
import zipfile
from pathlib import Path
from urllib.error import HTTPError, URLError
from urllib.parse import urlparse
from urllib.request import Request, urlopen

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]

MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
READ_DATA_CHUNK = 128 * 1024
HASH_REGEX = re.compile(r"-([a-f0-9]*)\.")
_TRUSTED_REPO_OWNERS = ("facebookresearch", "facebookincubator", "pytorch", "fairinternal")
_PATH_SEP = r"[/\\]"
_hub_dir = None


# -- the cache directory -----------------------------------------------------------

def _get_ptcore_home():
    home = os.getenv("PTCORE_HOME") or os.getenv("TORCH_HOME")
    if home is None:
        home = os.path.join(os.getenv("XDG_CACHE_HOME", "~/.cache"), "ptcore")
    return os.path.expanduser(home)


def get_dir():
    """The hub cache directory (``set_dir``'s, else ``$PTCORE_HOME/hub``)."""
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_get_ptcore_home(), "hub")


def set_dir(d):
    """Use ``d`` as the hub cache directory from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


# -- hubconf entry points ------------------------------------------------------------

def _import_module(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@contextlib.contextmanager
def _add_to_sys_path(path):
    sys.path.insert(0, path)
    try:
        yield
    finally:
        sys.path.remove(path)


def _load_hubconf(repo_dir):
    with _add_to_sys_path(repo_dir):
        path = os.path.join(repo_dir, MODULE_HUBCONF)
        if not os.path.isfile(path):
            raise FileNotFoundError(errno.ENOENT, f"no {MODULE_HUBCONF} in {repo_dir}", path)
        return _import_module(MODULE_HUBCONF, path)


def _load_attr_from_module(module, name):
    return getattr(module, name) if name in dir(module) else None


def _check_dependencies(m):
    deps = _load_attr_from_module(m, VAR_DEPENDENCY)
    if deps is not None:
        missing = [pkg for pkg in deps if importlib.util.find_spec(pkg) is None]
        if missing:
            raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")


def _load_entry_from_hubconf(m, model):
    if not isinstance(model, str):
        raise ValueError("Invalid input: model should be a string of function name")
    _check_dependencies(m)
    func = _load_attr_from_module(m, model)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {model} in hubconf")
    return func


def _load_local(hubconf_dir, model, *args, **kwargs):
    with _add_to_sys_path(hubconf_dir):
        hub_module = _import_module(MODULE_HUBCONF, os.path.join(hubconf_dir, MODULE_HUBCONF))
        entry = _load_entry_from_hubconf(hub_module, model)
        return entry(*args, **kwargs)


# -- GitHub repositories (downloaded once into the cache) ----------------------------

def _parse_repo_info(github):
    if ":" in github:
        repo_info, ref = github.split(":")
    else:
        repo_info, ref = github, None
    repo_owner, repo_name = repo_info.split("/")
    if ref is None:
        try:
            with urlopen(f"https://github.com/{repo_owner}/{repo_name}/tree/main/"):
                ref = "main"
        except HTTPError as e:
            if e.code != 404:
                raise
            ref = "master"
        except URLError as e:
            for possible in ("main", "master"):
                if os.path.exists(f"{get_dir()}/{repo_owner}_{repo_name}_{possible}"):
                    ref = possible
                    break
            if ref is None:
                raise RuntimeError("It looks like there is no internet connection and the repo "
                                   f"could not be found in the cache ({get_dir()})") from e
    return repo_owner, repo_name, ref


def _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo):
    hub_dir = get_dir()
    filepath = os.path.join(hub_dir, "trusted_list")
    Path(filepath).touch()
    with open(filepath) as fh:
        trusted = tuple(line.strip() for line in fh)
    legacy = next(os.walk(hub_dir))[1]
    owner_name = f"{repo_owner}_{repo_name}"
    is_trusted = (owner_name in trusted or owner_name_branch in legacy
                  or repo_owner in _TRUSTED_REPO_OWNERS)
    if trust_repo is False or (trust_repo == "check" and not is_trusted):
        response = input(f"The repository {owner_name} does not belong to the list of trusted "
                         "repositories and as such cannot be downloaded. Do you trust this "
                         "repository and wish to add it to the trusted list of repositories "
                         "(y/N)?")
        if response.lower() in ("y", "yes"):
            if is_trusted:
                print("The repository is already trusted.")
        elif response.lower() in ("n", "no", ""):
            raise Exception("Untrusted repository.")  # noqa: TRY002 - torch's exception
        else:
            raise ValueError(f"Unrecognized response {response}.")
    if not is_trusted:
        with open(filepath, "a") as fh:
            fh.write(owner_name + "\n")


def _remove_if_exists(path):
    if os.path.isfile(path):
        os.remove(path)
    elif os.path.exists(path):
        shutil.rmtree(path)


def _safe_extract_zip(zf, extract_to):
    """Extract ``zf`` refusing absolute paths and entries that escape ``extract_to``."""
    extract_to = Path(extract_to).resolve(strict=False)
    for member in zf.infolist():
        name = os.path.normpath(member.filename)
        if name.startswith(("/", "\\")) or (len(name) >= 2 and name[1] == ":"
                                            and name[0].isalpha()):
            raise ValueError(f"Archive entry has absolute path: {member.filename}")
        if ".." in re.split(_PATH_SEP, name):
            raise ValueError(f"Archive entry contains directory traversal: {member.filename}")
        if not (extract_to / name).resolve(strict=False).is_relative_to(extract_to):
            raise ValueError(f"Archive entry escapes target directory: {member.filename}")
        zf.extract(member, extract_to)


def _validate_not_a_forked_repo(repo_owner, repo_name, ref):
    headers = {"Accept": "application/vnd.github.v3+json"}
    token = os.environ.get("GITHUB_TOKEN")
    if token is not None:
        headers["Authorization"] = f"token {token}"
    for prefix in (f"https://api.github.com/repos/{repo_owner}/{repo_name}/branches",
                   f"https://api.github.com/repos/{repo_owner}/{repo_name}/tags"):
        page = 0
        while True:
            page += 1
            with urlopen(Request(f"{prefix}?per_page=100&page={page}", headers=headers)) as r:
                response = json.loads(r.read().decode(r.headers.get_content_charset("utf-8")))
            if not response:
                break
            for br in response:
                if br["name"] == ref or br["commit"]["sha"].startswith(ref):
                    return
    raise ValueError(f"Cannot find {ref} in https://github.com/{repo_owner}/{repo_name}. If it's "
                     "a commit from a forked repo, please call hub.load() with forked repo "
                     "directly.")


def _get_cache_or_reload(github, force_reload, trust_repo, verbose=True, skip_validation=False):
    hub_dir = get_dir()
    os.makedirs(hub_dir, exist_ok=True)
    repo_owner, repo_name, ref = _parse_repo_info(github)
    normalized = ref.replace("/", "_")
    owner_name_branch = "_".join([repo_owner, repo_name, normalized])
    repo_dir = os.path.join(hub_dir, owner_name_branch)
    _check_repo_is_trusted(repo_owner, repo_name, owner_name_branch, trust_repo)
    if not force_reload and os.path.exists(repo_dir):
        if verbose:
            sys.stderr.write(f"Using cache found in {repo_dir}\n")
        return repo_dir
    if not skip_validation:
        _validate_not_a_forked_repo(repo_owner, repo_name, ref)
    cached_file = os.path.join(hub_dir, normalized + ".zip")
    _remove_if_exists(cached_file)
    url = f"https://github.com/{repo_owner}/{repo_name}/zipball/{ref}"
    sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
    download_url_to_file(url, cached_file, progress=False)
    with zipfile.ZipFile(cached_file) as zf:
        extracted = os.path.join(hub_dir, zf.infolist()[0].filename)
        _remove_if_exists(extracted)
        _safe_extract_zip(zf, hub_dir)
    _remove_if_exists(cached_file)
    _remove_if_exists(repo_dir)
    shutil.move(extracted, repo_dir)
    return repo_dir


# -- public entry points -------------------------------------------------------------

def list(github, force_reload=False, skip_validation=False, trust_repo="check",  # noqa: A001
         verbose=True):
    """Names of the callable entry points in ``github``'s ``hubconf.py``."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=verbose,
                                    skip_validation=skip_validation)
    hub_module = _load_hubconf(repo_dir)
    return [f for f in dir(hub_module)
            if callable(getattr(hub_module, f)) and not f.startswith("_")]


def help(github, model, force_reload=False, skip_validation=False,  # noqa: A001
         trust_repo="check"):
    """The docstring of entry point ``model`` in ``github``'s ``hubconf.py``."""
    repo_dir = _get_cache_or_reload(github, force_reload, trust_repo, verbose=True,
                                    skip_validation=skip_validation)
    return _load_entry_from_hubconf(_load_hubconf(repo_dir), model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo="check", force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Call entry point ``model`` of a repository's ``hubconf.py`` and return its result.

    Parameters
    ----------
    repo_or_dir : str
        ``"owner/name[:ref]"`` for ``source="github"``, a directory for ``source="local"``.
    model : str
        The name of a callable defined in ``hubconf.py``.
    *args, **kwargs
        Passed to it.
    source : {"github", "local"}
    trust_repo : bool or "check"
        As torch: ``"check"`` and ``False`` ask before running an untrusted repository.
    force_reload, verbose, skip_validation
        For ``source="github"`` only.
    """
    source = source.lower()
    if source not in ("github", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "local".')
    if source == "github":
        repo_or_dir = _get_cache_or_reload(repo_or_dir, force_reload, trust_repo,
                                           verbose=verbose, skip_validation=skip_validation)
    return _load_local(os.fspath(repo_or_dir), model, *args, **kwargs)


class _Faketqdm:
    """A minimal stand-in for tqdm when it is not installed (torch.hub's
    ``_Faketqdm``): percentages or byte counts on stderr; it also iterates
    over an iterable, as ``tqdm(loader)`` does."""

    def __init__(self, iterable=None, desc=None, total=None, disable=False, unit=None, *args,
                 **kwargs):
        self.iterable = iterable
        if total is None and iterable is not None:
            try:
                total = len(iterable)
            except TypeError:
                total = None
        self.total = total
        self.disable = disable
        self.n = 0

    def __iter__(self):
        for x in self.iterable:
            yield x
            self.update(1)
        self.close()

    def __len__(self):
        return self.total if self.total is not None else len(self.iterable)

    def update(self, n=1):
        if self.disable:
            return
        self.n += n
        if self.total is None:
            sys.stderr.write(f"\r{self.n:.1f} bytes")
        else:
            sys.stderr.write(f"\r{100 * self.n / float(self.total):.1f}%")
        sys.stderr.flush()

    def set_description(self, *args, **kwargs):
        pass

    def set_postfix(self, *args, **kwargs):
        pass

    def write(self, s):
        sys.stderr.write(f"{s}\n")

    def close(self):
        if not self.disable:
            sys.stderr.write("\n")
        self.disable = True

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_val, exc_tb):
        self.close()


try:
    from tqdm import tqdm
except ImportError:
    tqdm = _Faketqdm


def _progress_bar(total, enabled):
    return tqdm(total=total, disable=not enabled, unit="B", unit_scale=True, unit_divisor=1024)


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Copy the object at ``url`` to the path ``dst`` (through a temporary file);
    with ``hash_prefix``, its SHA-256 must start with it."""
    dst = os.path.expanduser(os.fspath(dst))
    for _ in range(tempfile.TMP_MAX):
        tmp = dst + "." + uuid.uuid4().hex + ".partial"
        try:
            f = open(tmp, "x+b")  # noqa: SIM115 - closed in finally
        except FileExistsError:
            continue
        break
    else:
        raise FileExistsError(errno.EEXIST, "No usable temporary file name found")
    try:
        with urlopen(Request(url, headers={"User-Agent": "ptcore.hub"})) as u:
            length = u.info().get_all("Content-Length")
            size = int(length[0]) if length else None
            sha256 = hashlib.sha256() if hash_prefix is not None else None
            with _progress_bar(size, progress) as bar:
                while True:
                    buf = u.read(READ_DATA_CHUNK)
                    if not buf:
                        break
                    f.write(buf)
                    if sha256 is not None:
                        sha256.update(buf)
                    bar.update(len(buf))
        f.close()
        if sha256 is not None:
            digest = sha256.hexdigest()
            if digest[:len(hash_prefix)] != hash_prefix:
                raise RuntimeError(f'invalid hash value (expected "{hash_prefix}", got '
                                   f'"{digest}")')
        shutil.move(f.name, dst)
    finally:
        f.close()
        if os.path.exists(f.name):
            os.remove(f.name)


def _is_legacy_zip_format(filename):
    if zipfile.is_zipfile(filename):
        with zipfile.ZipFile(filename) as zf:
            info = zf.infolist()
        return len(info) == 1 and not info[0].is_dir()
    return False


def _legacy_zip_load(filename, model_dir, map_location, weights_only):
    import ptcore
    warnings.warn("Falling back to the old format < 1.6. This support will be deprecated in "
                  "favor of default zipfile format introduced in 1.6. Please redo torch.save() "
                  "to save it in the new zipfile format.", FutureWarning, stacklevel=3)
    with zipfile.ZipFile(filename) as zf:
        members = zf.infolist()
        _safe_extract_zip(zf, model_dir)
        extracted = os.path.join(model_dir, members[0].filename)
    return ptcore.load(extracted, map_location=map_location, weights_only=weights_only)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=False):
    """Load the checkpoint at ``url`` with :func:`ptcore.load`, downloading it into
    ``model_dir`` (``<hub dir>/checkpoints``) unless it is already there.

    Parameters
    ----------
    url : str
        Where the checkpoint is (``https://``, ``file://`` ...).
    model_dir : str, optional
        The cache directory.
    map_location
        As :func:`ptcore.load`.
    progress : bool
        Show download progress on stderr.
    check_hash : bool
        The file name has the form ``name-<sha256 prefix>.ext``; verify it.
    file_name : str, optional
        Name of the cached file (the URL's by default).
    weights_only : bool
        As :func:`ptcore.load` (default False, as ``torch.hub``).
    """
    import ptcore
    if model_dir is None:
        model_dir = os.path.join(get_dir(), "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    filename = file_name if file_name is not None else os.path.basename(urlparse(url).path)
    cached_file = os.path.join(model_dir, filename)
    if not os.path.exists(cached_file):
        sys.stdout.write(f'Downloading: "{url}" to {cached_file}\n')
        hash_prefix = None
        if check_hash:
            r = HASH_REGEX.search(filename)
            hash_prefix = r.group(1) if r else None
        download_url_to_file(url, cached_file, hash_prefix, progress=progress)
    if _is_legacy_zip_format(cached_file):
        return _legacy_zip_load(cached_file, model_dir, map_location, weights_only)
    return ptcore.load(cached_file, map_location=map_location, weights_only=weights_only)


# torch's name for the cache root (torchvision's _internally_replaced_utils imports it)
_get_torch_home = _get_ptcore_home
