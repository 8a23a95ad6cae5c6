package conformance

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// Sample values for Argo placeholders. The Python side substitutes the same
// values before parsing manifests; keep the two in step (see README.md).
const (
	SampleWorkflowName     = "sample-workflow"
	SampleWorkflowUID      = "00000000-0000-0000-0000-000000000000"
	DefaultSampleNamespace = "argo"
	SampleValue            = "sample"
)

// The subset of a Workflow/WorkflowTemplate that substitution needs. Argo has
// already decoded the document strictly, so a lenient decode is enough here,
// and it keeps this package free of any one Argo release's types.
type workflow struct {
	Metadata struct {
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		Arguments arguments  `json:"arguments"`
		Templates []template `json:"templates"`
	} `json:"spec"`
}

type template struct {
	Name   string    `json:"name"`
	Inputs arguments `json:"inputs"`
	DAG    *struct {
		Tasks []call `json:"tasks"`
	} `json:"dag"`
	Steps    [][]call `json:"steps"`
	Resource *struct {
		Manifest string `json:"manifest"`
	} `json:"resource"`
}

// call is a DAG task or a step.
type call struct {
	Template  string    `json:"template"`
	Arguments arguments `json:"arguments"`
}

type arguments struct {
	Parameters []parameter `json:"parameters"`
}

type parameter struct {
	Name string `json:"name"`
	// Argo accepts any scalar here (its AnyString type), so keep the raw JSON.
	Value   json.RawMessage `json:"value"`
	Default json.RawMessage `json:"default"`
}

// scalar renders a raw JSON scalar as Argo does: strings unquoted, numbers and
// booleans as written. ok is false when the field is absent or null.
func scalar(raw json.RawMessage) (s string, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", false
	}
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err == nil {
			return s, true
		}
	}
	return string(raw), true
}

func (a arguments) lookup(name string) (string, bool) {
	for _, p := range a.Parameters {
		if p.Name == name {
			return scalar(p.Value)
		}
	}
	return "", false
}

// scope resolves placeholders for one template of one workflow.
type scope struct {
	wf   *workflow
	tmpl *template // nil for a bare Volcano Job
}

// placeholder matches {{...}}, tolerating spaces inside the braces.
var placeholder = regexp.MustCompile(`\{\{\s*([^{}]*?)\s*\}\}`)

// jsonParameter matches the one expression form we evaluate: a workflow
// parameter written as a JSON string by Argo's toJson.
var jsonParameter = regexp.MustCompile(`^=toJson\(workflow\.parameters\['([^']+)'\]\)$`)

// intParameter matches an integer field's expression (hera_volcano.kube.values):
// a workflow parameter or template input read by asInt, which Argo writes as a number.
var intParameter = regexp.MustCompile(`^=asInt\((workflow|inputs)\.parameters\['([^']+)'\]\)$`)

// listParameter matches a list field's expression (hera_volcano.kube.values):
// a parameter holding JSON, read by mustFromJson and written again by toJson.
var listParameter = regexp.MustCompile(`^=replace\(replace\(toJson\(sprig\.mustFromJson\((?:replace\()?(workflow|inputs)\.parameters\['([^']+)'\]`)

// SampleInt and SampleList stand for an integer and a list whose values are
// not known here.
const (
	SampleInt  = "1"
	SampleList = `["sample"]`
)

// expand replaces every placeholder in text with a sample value:
//
//	workflow.name, workflow.uid  fixed samples
//	workflow.namespace           metadata.namespace, else "argo"
//	workflow.parameters.X        spec.arguments value of X, else "sample"
//	inputs.parameters.X          the value the first call site passes, else the
//	                             input's value, else its default, else "sample"
//	=toJson(workflow.parameters['X'])  that value (or "sample") as a JSON string
//	=asInt(workflow.parameters['X']), =asInt(inputs.parameters['X'])
//	                             that value as written (a number), else "1"
//	=replace(replace(toJson(sprig.mustFromJson(...X...)) ...)
//	                             that value as written (JSON), else ["sample"]
//	anything else                "sample"
//
// A parameter value is itself expanded once more (nested), so that a call
// site passing "{{workflow.parameters.n}}" yields the workflow's n; in that
// second pass inputs.parameters has no meaning and becomes "sample".
func (s scope) expand(text string, nested bool) string {
	return placeholder.ReplaceAllStringFunc(text, func(m string) string {
		expr := placeholder.FindStringSubmatch(m)[1]
		switch {
		case expr == "workflow.name":
			return SampleWorkflowName
		case expr == "workflow.uid":
			return SampleWorkflowUID
		case expr == "workflow.namespace":
			if s.wf != nil && s.wf.Metadata.Namespace != "" {
				return s.wf.Metadata.Namespace
			}
			return DefaultSampleNamespace
		case strings.HasPrefix(expr, "workflow.parameters."):
			v, ok := "", false
			if s.wf != nil {
				v, ok = s.wf.Spec.Arguments.lookup(strings.TrimPrefix(expr, "workflow.parameters."))
			}
			return s.again(v, ok, nested)
		case jsonParameter.MatchString(expr):
			v, ok := "", false
			if s.wf != nil {
				v, ok = s.wf.Spec.Arguments.lookup(jsonParameter.FindStringSubmatch(expr)[1])
			}
			quoted, _ := json.Marshal(s.again(v, ok, nested))
			return string(quoted)
		case intParameter.MatchString(expr):
			return s.typed(intParameter.FindStringSubmatch(expr), SampleInt, nested)
		case listParameter.MatchString(expr):
			return s.typed(listParameter.FindStringSubmatch(expr), SampleList, nested)
		case strings.HasPrefix(expr, "inputs.parameters.") && !nested:
			v, ok := s.input(strings.TrimPrefix(expr, "inputs.parameters."))
			return s.again(v, ok, nested)
		}
		return SampleValue
	})
}

// typed is the value of the parameter a typed expression reads (groups: the
// root, workflow or inputs, and the name) as written, else sample.
func (s scope) typed(groups []string, sample string, nested bool) string {
	v, ok := "", false
	switch {
	case groups[1] == "workflow" && s.wf != nil:
		v, ok = s.wf.Spec.Arguments.lookup(groups[2])
	case groups[1] == "inputs" && !nested:
		v, ok = s.input(groups[2])
	}
	if !ok {
		return sample
	}
	return s.again(v, ok, nested)
}

func (s scope) again(v string, ok, nested bool) string {
	switch {
	case !ok:
		return SampleValue
	case nested:
		return v
	}
	return s.expand(v, true)
}

// input finds the value of the template's input parameter name: the argument
// of the first call site passing it (templates in order, DAG tasks or steps in
// order), else the declared value, else the declared default.
func (s scope) input(name string) (string, bool) {
	if s.wf == nil || s.tmpl == nil {
		return "", false
	}
	for _, t := range s.wf.Spec.Templates {
		var calls []call
		if t.DAG != nil {
			calls = t.DAG.Tasks
		}
		for _, group := range t.Steps {
			calls = append(calls, group...)
		}
		for _, c := range calls {
			if c.Template != s.tmpl.Name {
				continue
			}
			if v, ok := c.Arguments.lookup(name); ok {
				return v, true
			}
		}
	}
	for _, p := range s.tmpl.Inputs.Parameters {
		if p.Name == name {
			if v, ok := scalar(p.Value); ok {
				return v, true
			}
			return scalar(p.Default)
		}
	}
	return "", false
}

// checkManifests substitutes and checks the manifest of every resource
// template in an Argo document.
func checkManifests(text []byte) []error {
	var wf workflow
	j, err := yaml.YAMLToJSON(text)
	if err == nil {
		err = json.Unmarshal(j, &wf)
	}
	if err != nil {
		return []error{fmt.Errorf("reading templates: %w", err)}
	}
	var errs []error
	for i := range wf.Spec.Templates {
		t := &wf.Spec.Templates[i]
		if t.Resource == nil || t.Resource.Manifest == "" {
			continue // manifestFrom, or no resource template
		}
		manifest := scope{wf: &wf, tmpl: t}.expand(t.Resource.Manifest, false)
		if err := checkManifest([]byte(manifest)); err != nil {
			errs = append(errs, fmt.Errorf("template %s: manifest: %w", t.Name, err))
		}
	}
	return errs
}

// checkManifest checks a substituted resource manifest: exactly one object
// (several fail only at run time in Argo), of a known kind, decoded strictly.
func checkManifest(manifest []byte) error {
	var objs [][]byte
	var heads []header
	for _, text := range splitDocuments(manifest) {
		h, err := peek(text)
		if err != nil {
			return err
		}
		if !h.empty {
			objs, heads = append(objs, text), append(heads, h)
		}
	}
	if len(objs) != 1 {
		return fmt.Errorf("holds %d objects, want exactly 1", len(objs))
	}
	return decodeKnown(heads[0], objs[0])
}
