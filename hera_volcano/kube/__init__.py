"""Kubernetes as the API server sees it: name rules, quantities, the field table of pod templates, image
references, YAML read and written as Go's decoders do, ``$(VAR)`` expansion, and the shell files pods run
as they are."""
