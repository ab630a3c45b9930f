"""What the op files stand on, apart from them: :mod:`.spec` (an op version's
:class:`~ovgather.ops.core.spec.OpSpec`, its attributes and trace), :mod:`.registry` (the
index of op files and the lookup of a layer's spec), :mod:`.opsets` (which opsets hold
which op versions, from ``opsets.json``), :mod:`.values` (the tensors the walk carries,
with value bounds), :mod:`.dims` (the dim arithmetic several op families share),
:mod:`.casts` (element casts as Convert evaluates them on bounds), :mod:`.inputs` (how
``validate`` makes concrete inputs) and :mod:`.arrays` (the NumPy helpers of the
references). Nothing here imports an op file.
"""
