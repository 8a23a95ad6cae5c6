package main

import (
	"sort"
	"testing"

	wfv1 "github.com/argoproj/argo-workflows/v3/pkg/apis/workflow/v1alpha1"
	"github.com/argoproj/argo-workflows/v3/workflow/common"

	conformance "hera-volcano/conformance/common"
)

// TestValuesArriveExactly runs this line's own two-pass substitution
// (common.SubstituteParams) on the hostile values of tests/argo/test_values.py.
func TestValuesArriveExactly(t *testing.T) {
	substitute := func(manifest string, inputs, globals, locals map[string]string) (string, error) {
		tmpl := &wfv1.Template{Name: "run", Resource: &wfv1.ResourceTemplate{Action: "create", Manifest: manifest}}
		tmpl.Inputs.Parameters = parameters(inputs)
		out, err := common.SubstituteParams(tmpl, globals, locals)
		if err != nil {
			return "", err
		}
		return out.Resource.Manifest, nil
	}
	for _, failure := range conformance.CheckValues("../common/testdata/values.json", substitute) {
		t.Error(failure)
	}
}

func parameters(values map[string]string) []wfv1.Parameter {
	var out []wfv1.Parameter
	for name, value := range values {
		out = append(out, wfv1.Parameter{Name: name, Value: wfv1.AnyStringPtr(value)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
