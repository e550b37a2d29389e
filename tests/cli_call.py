"""Run the `privcausal` console script in-process, for the CLI tests: `from cli_call import call`."""
import contextlib
import io

from privcausal.cli import main


def call(*argv):
    "In-process run: (exit code, stdout, stderr)."
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try: main(list(argv))
        except SystemExit as e: code = e.code
    return code, out.getvalue(), err.getvalue()
