package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/workflow/common"
)

// TestValuesArriveExactly runs Argo's own two-pass substitution on the manifests
// and hostile values of tests/argo/test_values.py (testdata/values.json): each
// value must come out as one string, unchanged but for the $ doubled for
// argoexec's expansion (and twice where a pod expands it again).
func TestValuesArriveExactly(t *testing.T) {
	checkValues(t, func(tmpl *wfv1.Template, globals, locals map[string]string) (*wfv1.Template, error) {
		return common.SubstituteParams(tmpl, globals, locals)
	})
}

type fixture struct {
	Manifests map[string]string `json:"manifests"`
	Values    []string          `json:"values"`
}

func checkValues(t *testing.T, substitute func(*wfv1.Template, map[string]string, map[string]string) (*wfv1.Template, error)) {
	raw, err := os.ReadFile("../common/testdata/values.json")
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	for root, manifest := range f.Manifests {
		for _, value := range f.Values {
			tmpl := &wfv1.Template{Name: "run", Resource: &wfv1.ResourceTemplate{Action: "create", Manifest: manifest}}
			globals := map[string]string{"workflow.name": "wf", "workflow.namespace": "argo"}
			if root == "inputs" {
				tmpl.Inputs.Parameters = []wfv1.Parameter{
					{Name: "v", Value: wfv1.AnyStringPtr(value)}, {Name: "n", Value: wfv1.AnyStringPtr("3")},
				}
			} else {
				globals["workflow.parameters.v"] = value
				globals["workflow.parameters.n"] = "3"
			}
			out, err := substitute(tmpl, globals, map[string]string{"pod.name": "wf-run-1"})
			if err != nil {
				t.Errorf("%s %q: %v", root, value, err)
				continue
			}
			var job struct {
				Kind     string
				Metadata struct {
					GenerateName string            `json:"generateName"`
					Labels       map[string]string `json:"labels"`
				}
				Spec struct {
					Tasks []struct {
						Replicas int
						Template struct {
							Metadata struct{ Labels map[string]string }
							Spec     struct {
								Containers []struct {
									Args []string
									Env  []struct{ Name, Value string }
								}
							}
						}
					}
				}
			}
			if err := yaml.Unmarshal([]byte(out.Resource.Manifest), &job); err != nil {
				t.Errorf("%s %q: the manifest is not YAML: %v", root, value, err)
				continue
			}
			once := strings.ReplaceAll(value, "$", "$$")
			twice := strings.ReplaceAll(once, "$", "$$")
			task := job.Spec.Tasks[0]
			main := task.Template.Spec.Containers[0]
			got := []string{job.Kind, job.Metadata.GenerateName, job.Metadata.Labels["hera-volcano/job"],
				task.Template.Metadata.Labels["mine"], main.Args[0], main.Args[1], main.Env[0].Value}
			want := []string{"Job", "run-" + once + "-", once, once, twice, "[" + twice + "]", twice}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s %q: field %d is %q, want %q", root, value, i, got[i], want[i])
				}
			}
			if task.Replicas != 3 {
				t.Errorf("%s %q: replicas %d", root, value, task.Replicas)
			}
		}
	}
}
