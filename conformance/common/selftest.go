package conformance

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// selfTestDocs: a WorkflowTemplate with a Volcano Job, a Workflow using it by
// reference, and a Workflow whose DAG has a cycle.
const selfTestDocs = `apiVersion: argoproj.io/v1alpha1
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

// SelfTest runs a validator on documents whose verdicts are known: each Argo
// line's module tests its own linked validator with it.
func SelfTest(a Argo, dir string) error {
	path := filepath.Join(dir, "wf.yaml")
	if err := os.WriteFile(path, []byte(selfTestDocs), 0o644); err != nil {
		return err
	}
	want := "#2 Workflow cycle-* (" + a.Version() + "): templates.main sorting failed: graph with cycle"
	var out strings.Builder
	failed, err := Run(a, []string{path}, &out)
	if err != nil || failed != 1 || !strings.Contains(out.String(), want) || strings.Contains(want, "unknown") {
		return fmt.Errorf("failed=%d err=%v, output:\n%s", failed, err, out.String())
	}
	return nil
}
