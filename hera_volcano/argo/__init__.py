"""Argo Workflows around Volcano Jobs: the resource step, the log follower and the exit handler, and Argo's own
rules (conditions, parameters, limits) as lint and the builders apply them.

Importing this package loads nothing: ``job_template``, ``follow_logs`` and ``cleanup`` import ``hera.workflows``,
the rule modules do not.
"""
