"""What the commands do, as libraries: lint, RBAC derivation, GitOps rendering. They print and write nothing (the
command-line edge does); only ``lint.lint_file`` reads the file it is given (and looks whether the files a
kustomization in it lists exist)."""
