package e2e

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// recordEvent creates a core/v1 Event about the object ref, as a
// controller's recorder does; a ref without UID joins by kind and name.
func recordEvent(t *testing.T, ns, name string, ref corev1.ObjectReference, typ, reason, message string) *corev1.Event {
	t.Helper()
	now := metav1.Now()
	ref.Namespace = ns
	e, err := testEnv.client.CoreV1().Events(ns).Create(bg, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: name},
		InvolvedObject: ref,
		Type:           typ, Reason: reason, Message: message, Count: 1,
		FirstTimestamp: now, LastTimestamp: now,
		Source: corev1.EventSource{Component: "e2e"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating event %s: %v", name, err)
	}
	return e
}

func cmRef(cm *corev1.ConfigMap) corev1.ObjectReference {
	return corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID}
}

// TestEvents: --events adds the Events of the watched objects to the
// stream, by UID (or kind and name without one), and no others; a
// repetition is one Updated line with its count; an Event's deletion is
// not shown; an Event that comes before its object waits for it; text
// escapes what Events say, JSON keeps it exact.
func TestEvents(t *testing.T) {
	ns := newNamespace(t)
	subject := createCM(t, ns, "subject", map[string]string{"role": "subject"}, nil)
	bystander := createCM(t, ns, "bystander", nil, nil)
	hostile := "pull \x1b]0;owned\x07failed \x1b[2J"
	e1 := recordEvent(t, ns, "e1", cmRef(subject), "Warning", "Hostile", hostile)
	recordEvent(t, ns, "e2", cmRef(bystander), "Normal", "Unrelated", "not about the subject")

	t.Run("named object, text", func(t *testing.T) {
		r := run(t, time.Minute, "cm/subject", "-n", ns, "--events", "--until-synced")
		want := "Replaced: subject\n" + `Event: configmap subject Warning Hostile: pull \x1b]0;owned\x07failed \x1b[2J` + "\n"
		if r.code != 0 || r.stdout != want || r.stderr != "" {
			t.Errorf("exit %d, stdout %q, want %q; stderr %q", r.code, r.stdout, want, r.stderr)
		}
	})

	t.Run("named object, wide", func(t *testing.T) {
		r := run(t, time.Minute, "cm/subject", "-n", ns, "--events", "--until-synced", "-o", "wide")
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		if r.code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "TIME") {
			t.Fatalf("exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		// A line about its subject, its DELTA where the rows have theirs.
		want := regexp.MustCompile(`^\d\d:\d\d:\d\d +Event +configmap/subject Warning Hostile: pull \\x1b\]0;owned\\x07failed \\x1b\[2J$`)
		if !want.MatchString(lines[2]) || strings.Index(lines[2], "Event") != strings.Index(lines[0], "DELTA") {
			t.Errorf("the Event's line %q under %q, want %s aligned with DELTA", lines[2], lines[0], want)
		}
	})

	t.Run("selected objects, json", func(t *testing.T) {
		r := run(t, time.Minute, "cm", "-n", ns, "-l", "role=subject", "--events", "--until-synced", "-o", "json")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		var kinds []string
		for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			var rec struct {
				Type, Kind, APIVersion, Name string
				Health                       any
				Object                       struct {
					Note      string
					Regarding struct{ UID string }
				}
			}
			if err := json.Unmarshal([]byte(line), &rec); err != nil {
				t.Fatal(err)
			}
			kinds = append(kinds, rec.Kind)
			if rec.Kind != "Event" {
				continue
			}
			if rec.APIVersion != "events.k8s.io/v1" || rec.Type != "Replaced" || rec.Name != "e1" || rec.Object.Note != hostile ||
				rec.Object.Regarding.UID != string(subject.UID) || rec.Health != nil {
				t.Errorf("event record %s", line)
			}
		}
		if strings.Join(kinds, ",") != "ConfigMap,Event" {
			t.Errorf("kinds %v, want the ConfigMap and its Event:\n%s", kinds, r.stdout)
		}
	})

	t.Run("stream", func(t *testing.T) {
		s := start(t, "cm", "-n", ns, "-l", "role=subject", "--events", "--watch-only")
		waitWatching(t, s, ns, map[string]string{"role": "subject"})

		// A repetition: one Updated line with the count.
		e1.Count, e1.LastTimestamp = 2, metav1.Now()
		if _, err := testEnv.client.CoreV1().Events(ns).Update(bg, e1, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		s.expect(`Event: configmap subject Warning Hostile: pull \x1b]0;owned\x07failed \x1b[2J (2 times)`)

		// Neither an Event's deletion nor another object's Event shows.
		if err := testEnv.client.CoreV1().Events(ns).Delete(bg, "e1", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		recordEvent(t, ns, "e3", cmRef(bystander), "Normal", "Unrelated", "still not")

		// An Event before its object (no UID: kind and name) waits for it.
		recordEvent(t, ns, "e4", corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "late"}, "Normal", "Early", "before the object")
		createCM(t, ns, "late", map[string]string{"role": "subject"}, nil)
		s.expect("Added: late", "Event: configmap late Normal Early: before the object")
		recordEvent(t, ns, "e5", cmRef(subject), "Normal", "Later", "after all that")
		s.expect("Event: configmap subject Normal Later: after all that")
	})

	t.Run("bad input and no rights", func(t *testing.T) {
		r := run(t, time.Minute, "cm", "-n", ns, "--events", "--metadata-only")
		if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "error: --events cannot be used with --metadata-only") {
			t.Errorf("--metadata-only: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
		}
		// alice may list and watch ConfigMaps in ns, not Events: one note,
		// and the stream goes on without them.
		grantAlice(t, testEnv.client, ns, "cm-reader", "get", "list", "watch")
		r = runAs(t, testEnv.cp.UserKubeconfig(), time.Minute, "cm", "-n", ns, "-l", "role=subject", "--events", "--until-synced")
		wantErr := "info: --events: you may not list and watch events.events.k8s.io in namespace " + ns + ": no Events from there\n"
		if r.code != 0 || !strings.Contains(r.stdout, "Replaced: subject\n") || strings.Contains(r.stdout, "Event:") || r.stderr != wantErr {
			t.Errorf("no rights to Events: exit %d, stdout %q, stderr %q, want %q", r.code, r.stdout, r.stderr, wantErr)
		}
	})
}
