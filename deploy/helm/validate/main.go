// Command validate reads Kubernetes manifests (YAML documents, as `helm template` prints them) on
// stdin and decodes each strictly into its type from k8s.io/api: an unknown or misspelt field, or a
// value of the wrong type, is an error naming the document. Kinds it has no type for (the CRDs of
// Strimzi and KEDA) are listed as unchecked.
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// kinds: apiVersion/kind -> a new value of its type.
var kinds = map[string]func() any{
	"apps/v1/Deployment":            func() any { return &appsv1.Deployment{} },
	"apps/v1/StatefulSet":           func() any { return &appsv1.StatefulSet{} },
	"v1/ConfigMap":                  func() any { return &corev1.ConfigMap{} },
	"v1/Secret":                     func() any { return &corev1.Secret{} },
	"v1/Service":                    func() any { return &corev1.Service{} },
	"v1/Pod":                        func() any { return &corev1.Pod{} },
	"v1/PersistentVolumeClaim":      func() any { return &corev1.PersistentVolumeClaim{} },
	"batch/v1/Job":                  func() any { return &batchv1.Job{} },
	"policy/v1/PodDisruptionBudget": func() any { return &policyv1.PodDisruptionBudget{} },
}

type header struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

func main() {
	data, err := io.ReadAll(bufio.NewReader(os.Stdin))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	failed, checked := 0, 0
	for _, doc := range bytes.Split(data, []byte("\n---")) {
		if len(bytes.TrimSpace(doc)) == 0 || strings.TrimSpace(stripComments(string(doc))) == "" {
			continue
		}
		var h header
		if err := yaml.Unmarshal(doc, &h); err != nil {
			fmt.Printf("invalid YAML: %v\n", err)
			failed++
			continue
		}
		name := fmt.Sprintf("%s %s", h.Kind, h.Metadata.Name)
		newValue, known := kinds[h.APIVersion+"/"+h.Kind]
		if !known {
			fmt.Printf("unchecked (no type here): %s (%s)\n", name, h.APIVersion)
			continue
		}
		if err := yaml.UnmarshalStrict(doc, newValue()); err != nil {
			fmt.Printf("INVALID %s: %v\n", name, err)
			failed++
			continue
		}
		checked++
		fmt.Printf("valid %s\n", name)
	}
	fmt.Printf("%d valid, %d invalid\n", checked, failed)
	if failed > 0 {
		os.Exit(1)
	}
}

func stripComments(doc string) string {
	var kept []string
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}
