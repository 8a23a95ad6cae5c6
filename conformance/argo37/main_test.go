package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	conformance "hera-volcano/conformance/common"
)

// A WorkflowTemplate with a Volcano Job, a Workflow using it by reference, and
// a Workflow whose DAG has a cycle.
const docs = `apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: lib}
spec:
  templates:
  - name: job
    inputs: {parameters: [{name: size, default: "2"}]}
    resource:
      action: create
      manifest: |
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata: {name: "{{workflow.name}}"}
        spec: {minAvailable: {{inputs.parameters.size}}}
---
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: ref-}
spec:
  entrypoint: main
  templates:
  - name: main
    dag: {tasks: [{name: a, templateRef: {name: lib, template: job}}]}
---
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata: {generateName: cycle-}
spec:
  entrypoint: main
  templates:
  - name: main
    dag: {tasks: [{name: a, template: main, dependencies: [b]}, {name: b, template: main, dependencies: [a]}]}
`

func TestValidate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wf.yaml")
	if err := os.WriteFile(path, []byte(docs), 0o644); err != nil {
		t.Fatal(err)
	}
	a := argo{}
	want := "#2 Workflow cycle-* (" + a.Version() + "): templates.main sorting failed: graph with cycle"
	var out strings.Builder
	failed, err := conformance.Run(a, []string{path}, &out)
	if err != nil || failed != 1 || !strings.Contains(out.String(), want) || strings.Contains(want, "unknown") {
		t.Errorf("failed=%d err=%v, output:\n%s", failed, err, out.String())
	}
}
