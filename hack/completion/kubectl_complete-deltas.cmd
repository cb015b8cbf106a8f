@echo off
rem Shell completion of "kubectl deltas" through kubectl (1.26 and later):
rem kubectl runs kubectl_complete-deltas from PATH with the words typed after
rem "deltas"; the plugin answers with cobra's __complete protocol.
kubectl-deltas.exe __complete %*
