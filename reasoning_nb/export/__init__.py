"""Export notebooks with their ``%%think`` reasoning collapsible, inline or stripped.

    jupyter nbconvert --to reasoning-html NB.ipynb --ReasoningPreprocessor.mode=collapsible
    jupyter nbconvert --to reasoning-markdown NB.ipynb --ReasoningPreprocessor.mode=inline
    jupyter nbconvert --to reasoning-notebook NB.ipynb --ReasoningPreprocessor.mode=strip
    python -m reasoning_nb export NB.ipynb --mode strip --to html|md|notebook

JupyterLab's *File → Save and Export Notebook As* lists them as ``Reasoning_html``,
``Reasoning_markdown`` and ``Reasoning_notebook`` (see ``exporters``); they use the server's
``ReasoningPreprocessor.mode`` (default ``collapsible``). The preprocessor also works with the
stock exporters: ``--MarkdownExporter.preprocessors=
'["reasoning_nb.export.preprocessor.ReasoningPreprocessor"]'``.

Modules: ``exporters`` (entry points; imports nothing heavy), ``preprocessor`` (the work),
``widgets`` (saved widget state), ``mathml`` (the HTML export's math as MathML, read offline),
``cli``. A saved trace is read as untrusted input by
``core.schema``. The views per mode are ``views.render``'s and, for ``--compare`` outputs,
``views.compare``'s, shared with the notebook. Only the saved metadata and those two are read
here — never ``notebook/`` or ``providers/``.
"""
