package condition

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kubectl-deltas/kubectl-deltas/internal/printer"
	"github.com/kubectl-deltas/kubectl-deltas/internal/rawobj"
	"github.com/kubectl-deltas/kubectl-deltas/internal/textsafe"
)

// DefaultLogLines is how many lines of a failing container's log a
// verdict shows unless --logs says otherwise: what fits a screen beside
// the Warning line.
const DefaultLogLines = 10

// logLimitBytes bounds what one request reads of a container's log: at
// most this many bytes of its end, whatever its lines' length.
const logLimitBytes = 16 << 10

// logFetch is how the explanation of a failure reads the logs of failing
// containers: lines per container (0: none), and where a log that cannot
// be read is said (one info line each).
type logFetch struct {
	lines int
	warn  io.Writer
}

// failingContainer is the container of the Pod h whose log explains its
// failure, and whether that log is its previous instance's: the
// container its health names (crash-looping, an error while waiting), or
// else, for a Pod that failed, the first container that ended with an
// error. ok is false when h is not such a Pod, or the container never ran
// (a pull error: it has no log).
func failingContainer(h *Held) (name string, previous, ok bool) {
	if h.Kind != "Pod" || h.obj == nil || h.Verdict == nil {
		return "", false, false
	}
	decoded, err := rawobj.DecodeExact(h.obj.JSON)
	pod, isMap := decoded.(map[string]any)
	if err != nil || !isMap {
		return "", false, false
	}
	for _, field := range []string{"initContainerStatuses", "containerStatuses"} {
		statuses, _, _ := unstructured.NestedSlice(pod, "status", field)
		for _, s := range statuses {
			cs, isMap := s.(map[string]any)
			if !isMap {
				continue
			}
			name, _, _ := unstructured.NestedString(cs, "name")
			restarts := number(cs["restartCount"])
			_, ran, _ := unstructured.NestedMap(cs, "lastState", "terminated")
			_, running, _ := unstructured.NestedMap(cs, "state", "running")
			ended, terminated, _ := unstructured.NestedMap(cs, "state", "terminated")
			exit := number(ended["exitCode"])
			switch {
			case h.Verdict.Container != "" && name != h.Verdict.Container:
				continue
			case h.Verdict.Container == "" && (!terminated || exit == 0):
				continue // no container named: one that ended with an error
			case restarts > 0 || ran:
				return name, true, true
			case running || terminated:
				return name, false, true
			}
			return "", false, false // named, and it never ran
		}
	}
	return "", false, false
}

// number is a decoded JSON integer (a json.Number), 0 if v is none.
func number(v any) int64 {
	n, ok := v.(json.Number)
	if !ok {
		return 0
	}
	i, _ := n.Int64()
	return i
}

// fetchLogs adds to h the last lines of the log of its failing container
// (failingContainer): one request, bounded by ctx and logLimitBytes. A
// log that cannot be read is said on f.warn and kept in h.Logs as why.
func (f logFetch) fetchLogs(ctx context.Context, client rest.Interface, h *Held) {
	if f.lines <= 0 {
		return
	}
	container, previous, ok := failingContainer(h)
	if !ok {
		return
	}
	h.Logs = &printer.VerdictLogs{Container: container, Previous: previous}
	raw, err := client.Get().AbsPath("/api/v1/namespaces", h.Namespace, "pods", h.ObjectName, "log").
		Param("container", container).
		Param("previous", strconv.FormatBool(previous)).
		Param("tailLines", strconv.Itoa(f.lines)).
		Param("limitBytes", strconv.Itoa(logLimitBytes)).
		Do(ctx).Raw()
	if err != nil {
		h.Logs.Unavailable = logError(raw, err)
		if f.warn != nil {
			fmt.Fprintf(f.warn, "info: no logs for %s: %s\n", h.Name, textsafe.OneLine(h.Logs.Unavailable))
		}
		return
	}
	h.Logs.Lines = lastLines(string(raw), f.lines, len(raw) >= logLimitBytes)
}

// logError is why a log could not be read: the message of the Status the
// server answered with (body), else the error.
func logError(body []byte, err error) string {
	var status struct {
		Kind, Message string
	}
	if json.Unmarshal(body, &status) == nil && status.Kind == "Status" && status.Message != "" {
		return status.Message
	}
	var api apierrors.APIStatus
	if errors.As(err, &api) && api.Status().Message != "" {
		return api.Status().Message
	}
	return err.Error()
}

// lastLines are the last n lines of log, without their line ends; cut
// says the log was cut at its start (limitBytes), so its first line may
// be a part of one and is left out.
func lastLines(log string, n int, cut bool) []string {
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	if cut && len(lines) > 1 {
		lines = lines[1:]
	}
	if len(lines) == 1 && lines[0] == "" {
		return []string{}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}
