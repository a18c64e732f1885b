// custom-resource-check checks the custom resources of a rendered kustomization, which
// kubernetes-validate has no schema for, and writes every other document through for it.
//
//	custom-resource-check -rest OTHERS.yaml RENDERED.yaml
//
// A PrometheusRule (monitoring.coreos.com/v1) is decoded strictly into the Prometheus Operator's own
// Go types (an unknown or misplaced field fails, as a strict apply would), and what its CRD's schema
// requires is checked: a valid name and labels, named groups, each rule an alert or a record with an
// expression, durations in the CRD's pattern. The expressions themselves are promtool's to check
// (scripts/ci/alerts.sh runs `promtool check rules` on this resource's spec). Any other custom
// resource fails: there is no check for it yet. Prints the resources checked; exit 0 when all pass,
// 1 when one does not (each problem on a line of its own), 2 when the input cannot be read.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// The CRD's pattern for monitoringv1.Duration (a Prometheus duration).
var durationPattern = regexp.MustCompile(`^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`)

// Label names as Prometheus takes them (the legacy scheme the rules use).
var labelNamePattern = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

func main() {
	rest := flag.String("rest", "", "where to write the documents that are not custom resources")
	flag.Parse()
	if flag.NArg() != 1 || *rest == "" {
		fmt.Fprintln(os.Stderr, "usage: custom-resource-check -rest OTHERS.yaml RENDERED.yaml")
		os.Exit(2)
	}
	problems, err := run(flag.Arg(0), *rest)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	for _, problem := range problems {
		fmt.Println(problem)
	}
	if len(problems) > 0 {
		os.Exit(1)
	}
}

func run(renderedPath, restPath string) ([]string, error) {
	file, err := os.Open(renderedPath)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(file))
	var others bytes.Buffer
	var problems, checked []string
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var meta typeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("a document that is not YAML: %w", err)
		}
		group := ""
		if i := strings.Index(meta.APIVersion, "/"); i >= 0 {
			group = meta.APIVersion[:i]
		}
		switch {
		case meta.APIVersion == "monitoring.coreos.com/v1" && meta.Kind == "PrometheusRule":
			found, name := checkPrometheusRule(doc)
			problems = append(problems, found...)
			checked = append(checked, "PrometheusRule/"+name)
		case isCustomGroup(group):
			problems = append(problems, fmt.Sprintf("FAIL %s %s: a custom resource this check knows nothing of", meta.APIVersion, meta.Kind))
		default:
			others.WriteString("---\n")
			others.Write(doc)
			if !bytes.HasSuffix(doc, []byte("\n")) {
				others.WriteString("\n")
			}
		}
	}
	if len(problems) == 0 && len(checked) > 0 {
		fmt.Println(strings.Join(checked, ", "))
	}
	return problems, os.WriteFile(restPath, others.Bytes(), 0o644)
}

// Built-in API groups have no dot (apps, batch, policy, autoscaling, the core group "") or end in .k8s.io.
func isCustomGroup(group string) bool {
	return strings.Contains(group, ".") && !strings.HasSuffix(group, ".k8s.io")
}

// checkPrometheusRule returns what is wrong with the document, and its name.
func checkPrometheusRule(doc []byte) ([]string, string) {
	var rule monitoringv1.PrometheusRule
	if err := yaml.UnmarshalStrict(doc, &rule); err != nil {
		return []string{fmt.Sprintf("FAIL PrometheusRule: %v", err)}, rule.Name
	}
	where := "PrometheusRule " + rule.Name
	var problems []string
	fail := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf("FAIL %s: %s", where, fmt.Sprintf(format, args...)))
	}
	for _, msg := range validation.IsDNS1123Subdomain(rule.Name) {
		fail("metadata.name: %s", msg)
	}
	for key, value := range rule.Labels {
		for _, msg := range validation.IsQualifiedName(key) {
			fail("label %q: %s", key, msg)
		}
		for _, msg := range validation.IsValidLabelValue(value) {
			fail("label %q value %q: %s", key, value, msg)
		}
	}
	if len(rule.Spec.Groups) == 0 {
		fail("spec.groups is empty")
	}
	groups := map[string]bool{}
	for g, group := range rule.Spec.Groups {
		at := fmt.Sprintf("spec.groups[%d]", g)
		if group.Name == "" {
			fail("%s: no name", at)
		} else if groups[group.Name] {
			fail("%s: group %q twice", at, group.Name)
		}
		groups[group.Name] = true
		checkDuration(fail, at+".interval", group.Interval)
		checkDuration(fail, at+".query_offset", group.QueryOffset)
		if len(group.Rules) == 0 {
			fail("%s: no rules", at)
		}
		for r, rule := range group.Rules {
			at := fmt.Sprintf("%s.rules[%d]", at, r)
			if (rule.Alert == "") == (rule.Record == "") {
				fail("%s: exactly one of alert and record must be set", at)
			}
			if strings.TrimSpace(rule.Expr.String()) == "" {
				fail("%s: no expr", at)
			}
			checkDuration(fail, at+".for", rule.For)
			if rule.KeepFiringFor != nil {
				value := monitoringv1.Duration(*rule.KeepFiringFor)
				checkDuration(fail, at+".keep_firing_for", &value)
			}
			for name := range rule.Labels {
				if !labelNamePattern.MatchString(name) {
					fail("%s: label name %q", at, name)
				}
			}
			for name := range rule.Annotations {
				if !labelNamePattern.MatchString(name) {
					fail("%s: annotation name %q", at, name)
				}
			}
			if rule.Record != "" && len(rule.Annotations) > 0 {
				fail("%s: a recording rule has no annotations", at)
			}
		}
	}
	return problems, rule.Name
}

func checkDuration(fail func(string, ...any), at string, value *monitoringv1.Duration) {
	if value != nil && !durationPattern.MatchString(string(*value)) {
		fail("%s: %q is not a duration", at, string(*value))
	}
}
