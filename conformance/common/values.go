package conformance

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

// Substitute is one Argo line's own two-pass substitution of a resource
// template's manifest, the template taking inputs as its input parameters.
type Substitute func(manifest string, inputs, globals, locals map[string]string) (string, error)

type valuesFixture struct {
	Manifests map[string]string `json:"manifests"`
	Values    []string          `json:"values"`
}

// substitutedJob is what CheckValues reads back from a substituted manifest.
type substitutedJob struct {
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

// CheckValues runs substitute on the manifests and hostile values of
// tests/argo/test_values.py (the fixture file, testdata/values.json): each
// value must come out as one string, unchanged but for the $ doubled for
// argoexec's expansion (and twice where a pod expands it again). It returns
// what came out otherwise, a line each.
func CheckValues(fixture string, substitute Substitute) []string {
	raw, err := os.ReadFile(fixture)
	if err != nil {
		return []string{err.Error()}
	}
	var f valuesFixture
	if err := json.Unmarshal(raw, &f); err != nil {
		return []string{err.Error()}
	}
	var failures []string
	for root, manifest := range f.Manifests {
		for _, value := range f.Values {
			inputs := map[string]string{}
			globals := map[string]string{"workflow.name": "wf", "workflow.namespace": "argo"}
			if root == "inputs" {
				inputs["v"], inputs["n"] = value, "3"
			} else {
				globals["workflow.parameters.v"], globals["workflow.parameters.n"] = value, "3"
			}
			out, err := substitute(manifest, inputs, globals, map[string]string{"pod.name": "wf-run-1"})
			if err != nil {
				failures = append(failures, fmt.Sprintf("%s %q: %v", root, value, err))
				continue
			}
			failures = append(failures, checkJob(root, value, out)...)
		}
	}
	return failures
}

func checkJob(root, value, manifest string) []string {
	var job substitutedJob
	if err := yaml.Unmarshal([]byte(manifest), &job); err != nil {
		return []string{fmt.Sprintf("%s %q: the manifest is not YAML: %v", root, value, err)}
	}
	once := strings.ReplaceAll(value, "$", "$$")
	twice := strings.ReplaceAll(once, "$", "$$")
	task := job.Spec.Tasks[0]
	main := task.Template.Spec.Containers[0]
	got := []string{job.Kind, job.Metadata.GenerateName, job.Metadata.Labels["hera-volcano/job"],
		task.Template.Metadata.Labels["mine"], main.Args[0], main.Args[1], main.Env[0].Value}
	want := []string{"Job", "run-" + once + "-", once, once, twice, "[" + twice + "]", twice}
	var failures []string
	for i := range want {
		if got[i] != want[i] {
			failures = append(failures, fmt.Sprintf("%s %q: field %d is %q, want %q", root, value, i, got[i], want[i]))
		}
	}
	if task.Replicas != 3 {
		failures = append(failures, fmt.Sprintf("%s %q: replicas %d", root, value, task.Replicas))
	}
	return failures
}
