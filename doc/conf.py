"""Sphinx configuration of ptcore's documentation.

Build (the ``doc`` extra installs what it needs)::

    python -m pip install ".[doc]"
    sphinx-build -W -b html doc doc/_build/html
"""
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import ptcore  # noqa: E402  (the package being documented must import)

project = "ptcore"
author = "the ptcore developers"
copyright = "the ptcore developers"
release = str(ptcore.__version__)    # a TorchVersion (a str subclass); Sphinx wants str
version = ".".join(release.split(".")[:2])

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.doctest",
    "sphinx.ext.intersphinx",
    "sphinx.ext.mathjax",
    # docstrings come in two styles: numpydoc's sections (ptcore's own) and
    # PyTorch's Google-style "Args:" blocks (kept where the API mirrors
    # torch's); napoleon turns the latter into fields before numpydoc runs
    "sphinx.ext.napoleon",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "ptcore_apigen",
]

exclude_patterns = ["_build", "**.ipynb_checkpoints"]
templates_path = []
default_role = "autolink"
nitpicky = False

# -- autodoc / autosummary / numpydoc ------------------------------------------
autosummary_generate = False        # the reference pages are written by ptcore_apigen
autodoc_default_options = {"member-order": "alphabetical"}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_validation_checks = set()
numpydoc_xref_param_type = False
napoleon_google_docstring = True
napoleon_numpy_docstring = False

# -- doctest (``sphinx-build -b doctest doc doc/_build/doctest``) -------------
doctest_global_setup = "import ptcore\nimport numpy as np"

# -- intersphinx: only inventories shipped with this tree are used offline ----
intersphinx_mapping = {}

# -- gallery: examples/ (plot_*.py are run; the training scripts are shown) ---
sphinx_gallery_conf = {
    "examples_dirs": str(HERE.parent / "examples"),
    "gallery_dirs": "gallery",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"(__init__|make_corpus|setup|/extension/)",
    "download_all_examples": False,
    "remove_config_comments": True,
    "plot_gallery": os.environ.get("PTCORE_DOC_PLOTS", "True"),
    "reset_modules": (),
    "abort_on_example_error": True,
    "min_reported_time": 10**6,
    "show_memory": False,
    "show_signature": False,
    "write_computation_times": False,
}

# -- HTML ----------------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"ptcore {release}"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_static_path = []
html_show_sourcelink = False
