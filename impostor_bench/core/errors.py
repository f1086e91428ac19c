"""User-facing errors: printed as one clear message (file, field, fix), no traceback."""


class ImpostorError(Exception):
    """Bad input from the user: a config, a word-pair file, a model role, a table.

    The message must name the file (or option), the field and the fix.  The CLI
    prints it without a traceback and exits with status 2.
    """
