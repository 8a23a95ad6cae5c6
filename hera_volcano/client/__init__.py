"""Running workflows from Python: submit, wait, follow logs, explain a gang that does not start, stop, delete.

It talks to the API server directly through the ``kubernetes`` package (the ``cluster`` extra), imported only when a
:class:`~hera_volcano.client.runs.Client` is made, so no Argo Server is needed. The modules that read the recorded
API objects (``result``, ``follow``, ``explain``, ``report``, ``progress``, ``failures``, ``submission``) do no
I/O (what a gang asks for is ``hera_volcano.volcano.amounts``); ``kubeapi`` and ``live`` call the API, and ``runs``
ties them together.
"""
