// Package conformance is the version-independent half of the argo37/argo4
// validators: it finds YAML files, splits them into documents, checks the
// non-Argo kinds and the Volcano Jobs, and prints one line per document.
// Everything that needs Argo's own code sits behind the Argo interface, which
// each validator module implements against the Argo release it links.
package conformance

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
)

// Argo is what a validator module provides: Argo's own parser and validator.
type Argo interface {
	// Version names the linked release, e.g. "argo v3.7.18".
	Version() string
	// Parse decodes one YAML document as the Argo CLI does (strictly).
	Parse(doc []byte) (any, error)
	// Validate checks a parsed Workflow as `argo submit` does, or a parsed
	// WorkflowTemplate as `argo template create` does. templates holds every
	// WorkflowTemplate parsed in this run, for template references.
	Validate(obj any, templates []any) error
}

// Main runs the validator on the command-line arguments and exits.
func Main(a Argo) {
	if len(os.Args) < 2 {
		fmt.Fprintf(os.Stderr, "usage: %s FILE_OR_DIR...\n", filepath.Base(os.Args[0]))
		os.Exit(2)
	}
	failed, err := Run(a, os.Args[1:], os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if failed > 0 {
		os.Exit(1)
	}
}

// ModuleVersion reports the version of a module linked into this binary, so
// that output always names the Argo release actually checked against.
func ModuleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == path {
				if dep.Replace != nil {
					return dep.Replace.Version
				}
				return dep.Version
			}
		}
	}
	return "(unknown)"
}

// document is one YAML document of an input file.
type document struct {
	path  string // as found by the walk
	index int    // 0-based, counting non-blank documents of the file
	text  []byte
	head  header
	obj   any   // Argo object, once parsed
	err   error // parse error
}

func (d *document) String() string {
	name := d.head.Metadata.Name
	if name == "" && d.head.Metadata.GenerateName != "" {
		name = d.head.Metadata.GenerateName + "*"
	}
	if name == "" {
		name = "-"
	}
	kind := d.head.Kind
	if kind == "" {
		kind = "-"
	}
	return fmt.Sprintf("%s#%d %s %s", d.path, d.index, kind, name)
}

func (d *document) isArgo() bool {
	return d.head.APIVersion == "argoproj.io/v1alpha1" &&
		(d.head.Kind == "Workflow" || d.head.Kind == "WorkflowTemplate")
}

// Run checks every document under paths, prints a line for each and a summary
// line, and returns the number of failed documents. err is for unusable input
// paths, or paths holding no document at all (a check of nothing is a mistake).
func Run(a Argo, paths []string, out io.Writer) (failed int, err error) {
	files, err := yamlFiles(paths)
	if err != nil {
		return 0, err
	}
	var docs []*document
	var templates []any
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return 0, err
		}
		for i, text := range splitDocuments(data) {
			d := &document{path: f, index: i, text: text}
			if d.head, d.err = peek(text); d.err != nil {
				docs = append(docs, d)
				continue
			}
			if !d.head.empty && d.head.Kind == "" && d.head.APIVersion == "" && isKustomizationFile(f) {
				d.head.Kind = "Kustomization" // kustomize lets these two fields be omitted
			}
			if d.isArgo() {
				// Parse everything first: a Workflow may reference a
				// WorkflowTemplate from a later file.
				d.obj, d.err = a.Parse(text)
				if d.err == nil && d.head.Kind == "WorkflowTemplate" {
					templates = append(templates, d.obj)
				}
			}
			docs = append(docs, d)
		}
	}

	for _, d := range docs {
		var errs []string
		add := func(err error) {
			if err != nil {
				errs = append(errs, oneLine(err.Error()))
			}
		}
		switch {
		case d.err != nil:
			add(d.err)
		case d.head.empty:
			continue // a document holding only comments, as kubectl skips it
		case d.isArgo():
			add(a.Validate(d.obj, templates))
			for _, err := range checkManifests(d.text) {
				add(err)
			}
		default:
			add(checkOther(d.path, d.head, d.text))
		}
		if len(errs) == 0 {
			fmt.Fprintf(out, "OK   %s (%s)\n", d, a.Version())
		} else {
			failed++
			fmt.Fprintf(out, "FAIL %s (%s): %s\n", d, a.Version(), strings.Join(errs, "; "))
		}
	}
	n := countDocs(docs)
	fmt.Fprintf(out, "%s: %d documents, %d failed\n", a.Version(), n, failed)
	if n == 0 {
		return 0, fmt.Errorf("no YAML documents in %s", strings.Join(paths, " "))
	}
	return failed, nil
}

func countDocs(docs []*document) (n int) {
	for _, d := range docs {
		if d.err != nil || !d.head.empty {
			n++
		}
	}
	return n
}

// yamlFiles expands directories (recursively) into their *.yaml/*.yml files,
// in lexical order; files named explicitly are taken whatever their suffix.
func yamlFiles(paths []string) ([]string, error) {
	var files []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			files = append(files, p)
			continue
		}
		err = filepath.WalkDir(p, func(path string, e fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if ext := filepath.Ext(path); !e.IsDir() && (ext == ".yaml" || ext == ".yml") {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return files, nil
}

// Argo's ParseObjects splits on this, so a document boundary is the same here
// as for `argo submit`.
var yamlSeparator = regexp.MustCompile(`\n---`)

// splitDocuments returns the non-blank documents of a file.
func splitDocuments(data []byte) [][]byte {
	var docs [][]byte
	for _, text := range yamlSeparator.Split(string(data), -1) {
		if strings.TrimSpace(text) != "" {
			docs = append(docs, []byte(text))
		}
	}
	return docs
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
