"""Sphinx configuration for ptcore's documentation (``sphinx-build doc doc/_build``)."""
project = "ptcore"
author = "the ptcore developers"
extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.napoleon",
              "sphinx.ext.doctest"]
napoleon_numpy_docstring = True
autosummary_generate = True
exclude_patterns = ["_build"]
html_theme = "alabaster"
