"""The nbconvert exporters (entry point group ``nbconvert.exporters``).

``reasoning-html``, ``reasoning-markdown``, ``reasoning-notebook``: the stock HTML, markdown and
notebook exporters, with :class:`~reasoning_nb.export.preprocessor.ReasoningPreprocessor`
run first (``--ReasoningPreprocessor.mode=collapsible|inline|strip``).

JupyterLab lists every exporter name in *File → Save and Export Notebook As*, and downloads
through ``/nbconvert/<name>/<path>``, a jupyter_server route whose name part is ``\\w+``
(jupyter_server 2.x): a hyphenated name gets a menu entry that answers 404. So each exporter
is also registered as ``reasoning_html``, ``reasoning_markdown``, ``reasoning_notebook`` (Lab
shows them as "Reasoning_html", ...), and inside a running Jupyter server the hyphenated names
are disabled, which keeps them out of ``/api/nbconvert`` and the menu. Re-enable them with
``c.ReasoningHTMLExporter.enabled = True`` (etc.) in the server's nbconvert config.

This module is imported whenever anything lists exporters (Lab's menu, ``/api/nbconvert``,
``jupyter nbconvert --help``), and one import error there empties the whole menu. So it imports
only nbconvert and traitlets; the preprocessor (markdown-it, the trace schema) is imported when
an export actually runs.
"""

from __future__ import annotations

import copy
import sys

from jinja2 import pass_context  # (nbconvert's own dependency: its filters take a context)
from nbconvert.exporters import HTMLExporter, MarkdownExporter, NotebookExporter
from traitlets import HasTraits, default


def in_jupyter_server() -> bool:
    """True inside a running Jupyter server process (where hyphenated names cannot be served)."""
    serverapp = sys.modules.get("jupyter_server.serverapp")
    try:
        return bool(serverapp and serverapp.ServerApp.initialized())
    except Exception:  # never let a listing fail on this check
        return False


class _ReasoningExport(HasTraits):
    """Runs ``ReasoningPreprocessor`` (mode from config) before the exporter's own steps."""

    reasoning_target = "html"

    @default("enabled")
    def _enabled_default(self) -> bool:
        return not in_jupyter_server()

    def from_notebook_node(self, nb, resources=None, **kw):
        from .preprocessor import ReasoningPreprocessor  # only when exporting: see module doc

        pre = ReasoningPreprocessor(parent=self, target=self.reasoning_target)
        nb, resources = pre.preprocess(copy.deepcopy(nb), {} if resources is None else resources)
        return super().from_notebook_node(self._prepared(nb), resources, **kw)

    def _prepared(self, nb):
        """The notebook after the reasoning preprocessor, before the exporter's own steps."""
        return nb


class ReasoningHTMLExporter(_ReasoningExport, HTMLExporter):
    """HTML with each ``%%think`` output rebuilt from its saved trace (``reasoning-html``), and
    its math typeset as MathML, which reads offline (``mathml``)."""

    export_from_notebook = "HTML (reasoning)"
    reasoning_target = "html"

    def _prepared(self, nb):
        nb = super()._prepared(nb)
        if not self.sanitize_html:  # (nbconvert's sanitiser would escape the MathML)
            from ..core.schema import COMPARE_KEY, DISPLAY_KEY, METADATA_KEY
            from .mathml import typeset_outputs

            typeset_outputs(nb, (METADATA_KEY, DISPLAY_KEY, COMPARE_KEY))
        return nb

    @pass_context
    def markdown2html(self, context, source):
        if self.sanitize_html:
            return super().markdown2html(context, source)
        from .mathml import markdown_html

        return markdown_html(self, context, source)


class ReasoningMarkdownExporter(_ReasoningExport, MarkdownExporter):
    """Markdown with each ``%%think`` output rebuilt from its saved trace; ``text/markdown``
    is used for them, not ``text/html`` (``reasoning-markdown``)."""

    export_from_notebook = "Markdown (reasoning)"
    reasoning_target = "markdown"


class ReasoningNotebookExporter(_ReasoningExport, NotebookExporter):
    """A notebook copy; with ``mode=strip`` it holds no reasoning (``reasoning-notebook``)."""

    export_from_notebook = "Notebook (reasoning)"
    reasoning_target = "notebook"


# -- the names JupyterLab's menu uses (always enabled) -------------------------------------------


class _MenuName(HasTraits):
    """The same exporter under a name jupyter_server can route, so enabled in a server too."""

    @default("enabled")
    def _enabled_default(self) -> bool:
        return True


class ReasoningHTMLMenuExporter(_MenuName, ReasoningHTMLExporter):
    """``reasoning_html``."""


class ReasoningMarkdownMenuExporter(_MenuName, ReasoningMarkdownExporter):
    """``reasoning_markdown``."""


class ReasoningNotebookMenuExporter(_MenuName, ReasoningNotebookExporter):
    """``reasoning_notebook``."""
