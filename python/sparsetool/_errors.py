"""The exceptions of sparsetool.

Every error the package raises is a :class:`Error`; each is also one of
Python's own classes, so ``except ValueError`` and ``except OSError`` work:

- :class:`InputError` (a :class:`ValueError`): bad content or parameters, e.g.
  a malformed Matrix Market line, an invalid ``.spb`` section, an ELL width
  below the longest row. The message names the file and the line or byte
  offset where it applies, as ``sparsetool`` on the command line prints it.
- :class:`FileError` (an :class:`OSError`): a file that cannot be opened,
  read, written or used as asked (missing, a directory, an existing output
  without ``overwrite``, an unknown extension).
- :class:`GpuUnavailableError` (a :class:`RuntimeError`): no CUDA driver or
  device for ``device="gpu"``.
"""


class Error(Exception):
    """Base class of every sparsetool error."""


class InputError(Error, ValueError):
    """Bad input: a malformed file, an invalid matrix or parameter."""


class FileError(Error, OSError):
    """A file cannot be opened, read, written or used as asked."""


class GpuUnavailableError(Error, RuntimeError):
    """No CUDA driver or device to run on."""


class ReadWarning(UserWarning):
    """A deviation accepted by ``lenient=True`` reading (file and line in the message)."""
