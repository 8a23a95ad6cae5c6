"""The ground floor: code that runs inside the workflow's pods, written once and run as it is.

Standard library only, and nothing else of the package: a pod's image need not have hera-volcano installed. The
modules here are joined into one program (:func:`hera_volcano.pods.program.source`) that a container runs with
``python3 -c``; the client imports the same modules, so the log follower's state machine exists exactly once.
"""
