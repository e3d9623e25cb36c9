"""The safe model-file format: a fitted model saved and loaded without pickle, atomically, every file checked.

- ``store``: the directory, its manifest, the atomic write and the checked read (``save_model``, ``load_model``,
  ``read_fitted``, :class:`ModelFileError`);
- ``reading``: each file's bytes checked against its recorded checksum, one complete version while saves replace it;
- ``migration``: what a file an older version wrote lacks, filled with what its model used;
- ``layout``: file names, format version, size bounds and the errors for a broken directory or part;
- ``schema``: the schemas of ``config.json`` and ``manifest.json`` and the checks they are built from;
- ``agreement``: checks across the keys of a parsed file, and against the parameter table (``model.params``);
- ``codec``: the bytes of each file (the config, the history tail, the weights).
"""

from .store import ModelFileError, load_model, read_fitted, save_model

__all__ = ["ModelFileError", "load_model", "read_fitted", "save_model"]
