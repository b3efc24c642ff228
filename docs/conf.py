"""Sphinx configuration of the ranklens documentation site (`make docs` builds it into build/docs/).

Built offline with warnings as errors: no intersphinx inventories, no remote fonts, scripts or images
(tests/test_docs.py checks the built HTML references nothing outside the site).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))

import ranklens  # noqa: E402  (the installed package: autodoc and the CLI reference import it)

project = "ranklens"
author = "ranklens developers"
copyright = "ranklens developers"  # Sphinx's name
release = ranklens.__version__
version = release

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "numpydoc",
    "sphinx_click",
    "ranklens_docs",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_ext", "Thumbs.db", ".DS_Store"]

# Markdown: anchors for headings (links like page.md#the-presets), tables, definition lists
myst_heading_anchors = 3
myst_enable_extensions = ["colon_fence", "deflist"]

# API reference: numpydoc docstrings, members in source order, only what each module's __all__ exports
autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the numpydoc sections state the types; signatures stay readable
autodoc_default_options = {"members": True, "show-inheritance": False}
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False

# no network at build time: nothing fetched, nothing linked from a CDN
html_theme = "pydata_sphinx_theme"
html_title = f"ranklens {release}"
html_static_path = ["_static"]
html_css_files = ["ranklens.css"]
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "navbar_align": "left",
    "header_links_before_dropdown": 7,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
    "navbar_end": ["theme-switcher"],
    "pygments_light_style": "default",
    "pygments_dark_style": "monokai",
}
html_sidebars = {"**": ["sidebar-nav-bs"]}
html_show_sourcelink = False
html_copy_source = False
html_last_updated_fmt = None
