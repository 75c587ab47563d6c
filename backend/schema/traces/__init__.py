"""Every method's trace model, one module per method, told apart by the ``kind`` field.

A new method adds ``traces/<method>.py`` with a model subclassing ``backend.schema.trace.Trace`` whose ``kind`` is
``Literal["<method>"]``. Every module here is imported below, which registers its traces, and its public models are
re-exported (``from backend.schema import MadamTrace``); nothing here names a method.
"""

from __future__ import annotations

import importlib
import pkgutil

from pydantic import BaseModel

from backend.schema.trace import Trace

__all__ = ["Trace"]

for _info in pkgutil.iter_modules(__path__):
    _module = importlib.import_module(f"{__name__}.{_info.name}")
    for _name, _value in vars(_module).items():
        if (isinstance(_value, type) and issubclass(_value, BaseModel) and _value.__module__ == _module.__name__
                and not _name.startswith("_")):
            globals()[_name] = _value
            __all__.append(_name)
