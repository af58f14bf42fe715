"""Views of a trace: static HTML, markdown and text, the compare tables, run statistics."""
