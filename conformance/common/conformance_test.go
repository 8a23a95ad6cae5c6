package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
	batchv1alpha1 "volcano.sh/apis/pkg/apis/batch/v1alpha1"
)

const sampleWorkflow = `
metadata: {namespace: research}
spec:
  arguments:
    parameters:
    - {name: workers, value: 3}
    - {name: queue, value: "q-{{workflow.name}}"}
    - {name: empty}
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, template: other}
      - {name: b, template: job, arguments: {parameters: [{name: size, value: "{{workflow.parameters.workers}}"}]}}
      - {name: c, template: job, arguments: {parameters: [{name: size, value: "9"}, {name: mode, value: second}]}}
  - name: job
    inputs:
      parameters:
      - {name: size}
      - {name: mode, default: first}
      - {name: pinned, value: fixed, default: unused}
      - {name: nested}
    steps:
    - - {name: s, template: job, arguments: {parameters: [{name: nested, value: "{{inputs.parameters.size}}"}]}}
`

func TestExpand(t *testing.T) {
	var wf workflow
	if err := yaml.Unmarshal([]byte(sampleWorkflow), &wf); err != nil {
		t.Fatal(err)
	}
	s := scope{wf: &wf, tmpl: &wf.Spec.Templates[1]}
	for in, want := range map[string]string{
		"{{workflow.name}}/{{workflow.uid}}":         "sample-workflow/00000000-0000-0000-0000-000000000000",
		"{{ workflow.namespace }}":                   "research",
		"{{workflow.parameters.workers}}":            "3", // a YAML number, as Argo prints it
		"{{workflow.parameters.queue}}":              "q-sample-workflow",
		"{{workflow.parameters.empty}}":              "sample",
		"{{workflow.parameters.undeclared}}":         "sample",
		"{{inputs.parameters.size}}":                 "3", // first call site, then resolved once more
		"{{inputs.parameters.mode}}":                 "second",
		"{{inputs.parameters.pinned}}":               "fixed",
		"{{inputs.parameters.nested}}":               "sample", // inputs inside a value mean nothing
		"{{inputs.parameters.missing}}":              "sample",
		"{{=sprig.trim(workflow.name)}} {{x}}":       "sample sample",
		"{{=toJson(workflow.parameters['queue'])}}":  `"q-sample-workflow"`,
		"{{=toJson(workflow.parameters['none'])}}":   `"sample"`,
		"{{=asInt(workflow.parameters['workers'])}}": "3",
		"{{=asInt(inputs.parameters['size'])}}":      "3",
		"{{=asInt(workflow.parameters['none'])}}":    "1",
		"{{=asInt(inputs.parameters['missing'])}}":   "1",
		`{{=replace(replace(toJson(sprig.mustFromJson(replace(inputs.parameters['size'], '$', '$$'))), 'x', 'y'), 'z', 'w')}}`: "3",
		`{{=replace(replace(toJson(sprig.mustFromJson(workflow.parameters['none'])), 'x', 'y'), 'z', 'w')}}`:                   `["sample"]`,
		"no placeholder {{ unterminated": "no placeholder {{ unterminated",
	} {
		if got := s.expand(in, false); got != want {
			t.Errorf("expand(%q) = %q, want %q", in, got, want)
		}
	}
	if got := (scope{}).expand("{{workflow.namespace}} {{inputs.parameters.a}}", false); got != "argo sample" {
		t.Errorf("bare scope: got %q", got)
	}
}

func TestDecodeStrict(t *testing.T) {
	ok := "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nspec:\n  minAvailable: 2\n  tasks: [{name: t, replicas: 2}]\n"
	if err := DecodeStrict([]byte(ok), new(batchv1alpha1.Job)); err != nil {
		t.Fatalf("valid job: %v", err)
	}
	for name, doc := range map[string]string{
		"unknown field": "spec:\n  minAvaliable: 2\n",
		"field case":    "spec:\n  MinAvailable: 2\n", // encoding/json would accept this
		"wrong type":    "spec:\n  minAvailable: \"2\"\n",
		"duplicate key": "spec:\n  queue: a\n  queue: b\n",
	} {
		if err := DecodeStrict([]byte(doc), new(batchv1alpha1.Job)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestCheckManifest(t *testing.T) {
	job := "apiVersion: batch.volcano.sh/v1alpha1\nkind: Job\nmetadata: {name: j}\n"
	if err := checkManifest([]byte(job)); err != nil {
		t.Errorf("one job: %v", err)
	}
	if err := checkManifest([]byte(job + "---\n" + job)); err == nil || !strings.Contains(err.Error(), "2 objects") {
		t.Errorf("two jobs: %v", err)
	}
	if err := checkManifest([]byte("apiVersion: v1\nkind: Pod\n")); err == nil {
		t.Error("a Pod was accepted")
	}
}

// fakeArgo accepts every Argo document, to test the driver on its own.
type fakeArgo struct{}

func (fakeArgo) Version() string           { return "argo test" }
func (fakeArgo) Parse([]byte) (any, error) { return nil, nil }
func (fakeArgo) Validate(any, []any) error { return nil }

func TestRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("kustomization.yaml", "resources: [wf.yaml, gone.yaml]\n")
	write("wf.yaml", `# leading comment
apiVersion: argoproj.io/v1alpha1
kind: WorkflowTemplate
metadata: {name: t}
spec:
  templates:
  - name: j
    resource:
      action: create
      manifest: |
        apiVersion: batch.volcano.sh/v1alpha1
        kind: Job
        metadata: {name: "{{workflow.name}}"}
        spec: {minAvailable: {{inputs.parameters.n}}}
---
# only a comment
---
apiVersion: v1
kind: Pod
`)
	write("notes.txt", "not YAML, not walked")
	var out strings.Builder
	failed, err := Run(fakeArgo{}, []string{dir}, &out)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(out.String(), dir+"/", "")), "\n")
	want := []string{
		"FAIL kustomization.yaml#0 Kustomization - (argo test): listed file \"gone.yaml\"",
		"FAIL wf.yaml#0 WorkflowTemplate t (argo test): template j: manifest:", // "sample" is no int32
		"FAIL wf.yaml#2 Pod - (argo test): unsupported kind",
		"argo test: 3 documents, 3 failed",
	}
	if failed != 3 || len(lines) != len(want) {
		t.Fatalf("failed=%d, output:\n%s", failed, out.String())
	}
	for i, w := range want {
		if !strings.HasPrefix(lines[i], w) {
			t.Errorf("line %d = %q, want prefix %q", i, lines[i], w)
		}
	}
}
