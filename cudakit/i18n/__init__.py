"""Translations: the course notebooks in other languages (``notebooks``, ``editions``)
and cudakit's own messages (``messages``)."""
