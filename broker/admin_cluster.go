package broker

import (
	"encoding/json"
	"net/http"
)

// clusterSource is what /cluster reads: the broker's part in the cluster,
// nil for a broker alone.
type clusterSource struct{ node *node }

// Words of /cluster's errors, which `felix cluster status` repeats.
const (
	clusterAloneError = "this broker runs alone, not in a cluster: it has no cluster status"
	clusterNotUpError = "the broker is starting: its cluster status is served once it is up"
)

// ClusterErrorJSON is /cluster's answer when it has no status to give: 404
// from a broker alone, 503 while the broker starts.
type ClusterErrorJSON struct {
	Error string `json:"error"`
}

// serveCluster answers GET /cluster with the cluster as this broker's
// View sees it (ClusterStatusJSON). It reads the View's copy, so a
// broker that lost the store still answers, with what it last saw; the
// revision says how far that is.
func (a *adminServer) serveCluster(w http.ResponseWriter, _ *http.Request) {
	src := a.cluster.Load()
	switch {
	case src == nil:
		writeJSON(w, http.StatusServiceUnavailable, ClusterErrorJSON{Error: clusterNotUpError})
	case src.node == nil:
		writeJSON(w, http.StatusNotFound, ClusterErrorJSON{Error: clusterAloneError})
	default:
		why, _ := a.unready()
		n := src.node
		writeJSON(w, http.StatusOK, clusterStatus(n.cfg.BrokerID, why == "", why, n.view.Status()))
	}
}

// writeJSON writes v indented, for people who curl it as much as for
// programs.
func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError) // a bug: the types marshal
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(append(body, '\n'))
}
