"""What every layer uses and nothing Kubernetes-, Volcano- or Argo-specific: the error users catch, argument checks,
findings, cycle detection, and the Argo placeholders that stand for run-time values inside manifests."""
