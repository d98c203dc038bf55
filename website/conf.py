"""Sphinx configuration of the course website (see website/build.py, which sets the language)."""

import os

lang = os.environ.get("CUDAKIT_SITE_LANG", "en")

project = "CUDA プログラミング入門 演習" if lang == "ja" else "CUDA programming: the labs"
language = lang
html_search_language = lang
extensions = ["myst_nb"]
myst_enable_extensions = ["dollarmath", "colon_fence", "html_image"]
nb_execution_mode = "off"  # the pages show the notebooks' stored H100 outputs
nb_merge_streams = True
html_theme = "sphinx_book_theme"
html_title = project
author = "cudakit"
html_static_path = ["static"]
html_css_files = ["course.css"]
html_copy_source = False
html_theme_options = {
    "show_toc_level": 2,
    "use_download_button": False,
    "home_page_in_toc": True,
}
exclude_patterns = ["_build", "**.ipynb_checkpoints"]
suppress_warnings = ["mystnb.unknown_mime_type", "myst.header"]
