"""Sphinx settings of the course website (`make html`, tools/build_site.py fills the source folder)."""

import json
import os

project = "gradlab"
author = "gradlab contributors"
extensions = ["myst_nb"]
html_theme = "sphinx_book_theme"
html_title = "gradlab: see, understand and make gradients"
exclude_patterns = ["_build", "_checks", "**.ipynb_checkpoints"]

# Every lesson runs while the site builds (its widgets' state goes into the page), in its own folder
# (its checks, _checks, are beside it); a failing cell fails the build.
nb_execution_mode = "force"
nb_execution_timeout = 900
nb_execution_raise_on_error = True
nb_execution_show_tb = True
myst_enable_extensions = ["dollarmath", "amsmath"]

# Nothing from outside the site: RequireJS, the widgets' HTML manager, the widget modules and MathJax
# are copied into _static/ by tools/page_assets.py; build_site.py writes their URLs to assets.json.
# (Sphinx wants those scripts' paths relative to _static/.)
with open(os.path.join(os.path.dirname(__file__), "assets.json"), encoding="utf-8") as _file:
    _assets = json.load(_file)
_static = {k: v.removeprefix("_static/") for k, v in _assets.items() if isinstance(v, str)}
nb_ipywidgets_js = {
    _static["require_js"]: {},
    "gradlab-amd-paths.js": {},  # the widget modules' bundles in _static/ (RequireJS paths)
    _static["html_manager"]: {"data-jupyter-widgets-cdn": "_static/cdn/"},
}
mathjax_path = _static["mathjax"]
html_static_path = ["_static"]
# Opened from disk (file://) a page cannot fetch other files: no search summaries read from _sources/,
# and the theme's light/dark mode starts at "auto" (the reader's colour scheme) instead of an empty one.
html_show_search_summary = False
html_context = {"default_mode": "auto"}

# Launch buttons (Binder, your JupyterHub: GRADLAB_JUPYTERHUB_URL, default a hub on this machine) need
# the repository's URL (GRADLAB_REPOSITORY_URL, else the clone's origin): without one they are left out.
html_theme_options = {"use_download_button": True}
if _assets["repository_url"]:
    html_theme_options.update({
        "repository_url": _assets["repository_url"],
        "repository_branch": os.environ.get("GRADLAB_REPOSITORY_BRANCH", "main"),
        "path_to_docs": "lessons",
        "use_repository_button": True,
        "launch_buttons": {
            "binderhub_url": "https://mybinder.org",
            "jupyterhub_url": os.environ.get("GRADLAB_JUPYTERHUB_URL", "http://localhost:8000"),
            "notebook_interface": "jupyterlab",
        },
    })
