"""The course around the engine and the widgets: where the lessons are, and the ``gradlab`` command.

``gradlab lessons DEST`` copies the lessons and their checks into DEST (see `gradlab.cli`);
``import gradlab.checks`` in a lesson's first cell makes its checks (``_checks``) importable however
the notebook was opened (see `gradlab.checks`).
"""
