{{/* Release-wide names and labels. */}}
{{- define "igw.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "igw.secretName" -}}
{{- .Values.secretName | default (printf "%s-secrets" (include "igw.fullname" .)) -}}
{{- end -}}

{{- define "igw.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) -}}
{{- end -}}

{{- define "igw.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The labels every pod of the release carries, whatever its component. */}}
{{- define "igw.releaseSelectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{/* Selector labels of one component; call with (dict "root" $ "component" "gateway"). */}}
{{- define "igw.selectorLabels" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{/*
The services of a distributed install, in start order, with what the chart must know of each:
its entry point, the variable holding its port, whether it owns tables (DATABASE_URL), whether
it calls upstream providers (the provider variables), whether it serves an admin API (the only
services given ADMIN_TOKEN) and whether the Ingress routes public requests to it.
*/}}
{{- define "igw.components" -}}
catalogue: { entry: dist/apps/catalogue/src/main.js, portVariable: CATALOGUE_PORT, database: true, providers: false, adminApi: true, public: false }
billing: { entry: dist/apps/billing/src/main.js, portVariable: BILLING_PORT, database: true, providers: false, adminApi: true, public: true }
decisions: { entry: dist/apps/decisions/src/main.js, portVariable: DECISIONS_PORT, database: false, providers: true, adminApi: false, public: false }
gateway: { entry: dist/apps/gateway/src/main.js, portVariable: PORT, database: false, providers: true, adminApi: false, public: true }
{{- end -}}

{{/*
Every upstream provider variable the services read (libs/providers/src/registry.ts), each an
optional key of the Secret: a provider whose key is absent is simply not configured.
*/}}
{{- define "igw.providerVariables" -}}
- OPENAI_API_KEY
- OPENAI_BASE_URL
- AZURE_OPENAI_API_KEY
- AZURE_OPENAI_ENDPOINT
- ANTHROPIC_API_KEY
- ANTHROPIC_BASE_URL
- GEMINI_API_KEY
- GEMINI_BASE_URL
- OPENROUTER_API_KEY
- OPENROUTER_BASE_URL
- GROQ_API_KEY
- GROQ_BASE_URL
- TOGETHER_API_KEY
- TOGETHER_BASE_URL
- MISTRAL_API_KEY
- MISTRAL_BASE_URL
- DEEPSEEK_API_KEY
- DEEPSEEK_BASE_URL
- XAI_API_KEY
- XAI_BASE_URL
- VLLM_API_KEY
- VLLM_BASE_URL
- OLLAMA_API_KEY
- OLLAMA_BASE_URL
- TYPESAFE_API_KEY
- TYPESAFE_BASE_URL
- DEEPGRAM_API_KEY
- DEEPGRAM_BASE_URL
- STABILITY_API_KEY
- STABILITY_BASE_URL
- AWS_BEARER_TOKEN_BEDROCK
- BEDROCK_BASE_URL
- GOOGLE_APPLICATION_CREDENTIALS
- VERTEX_BASE_URL
{{- end -}}

{{/* The ServiceAccount every pod of the release runs as. */}}
{{- define "igw.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "igw.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{/*
The providers file's content: a YAML object (`providersFile: {connections: [...]}`) or the
text of a file (`--set-file providersFile=providers.yaml`), as given.
*/}}
{{- define "igw.providersFile" -}}
{{- if not (or (kindIs "map" .Values.providersFile) (kindIs "string" .Values.providersFile)) -}}
{{- fail "providersFile: a YAML object ({connections: [...]}) or, with --set-file, a file's text" -}}
{{- end -}}
{{- if kindIs "string" .Values.providersFile -}}
{{- .Values.providersFile | trim -}}
{{- else -}}
{{- toYaml .Values.providersFile | trim -}}
{{- end -}}
{{- end -}}

{{/* Where the gateway pods find the providers file: a directory mount, never a subPath, so that kubelet's updates reach it. */}}
{{- define "igw.providersDirectory" -}}/etc/igw{{- end -}}

{{/*
gateway.secretEnv, checked: variable names, none that the chart already sets from the Secret
(REDIS_URL, the provider variables) and never ADMIN_TOKEN or DATABASE_URL, which the gateway
must not hold.
*/}}
{{- define "igw.gatewaySecretEnv" -}}
{{- $taken := concat (list "REDIS_URL" "ADMIN_TOKEN" "DATABASE_URL") (include "igw.providerVariables" . | fromYamlArray) -}}
{{- range .Values.gateway.secretEnv }}
{{- if not (regexMatch "^[A-Za-z_][A-Za-z0-9_]*$" (toString .)) }}
{{- fail (printf "gateway.secretEnv: %q is not an environment variable name" (toString .)) }}
{{- end }}
{{- if has . $taken }}
{{- fail (printf "gateway.secretEnv: %s is already read from the Secret by the chart, or is not the gateway's to hold" .) }}
{{- end }}
{{- end }}
{{- end -}}

{{/* One environment variable read from the chart's Secret. */}}
{{- define "igw.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef:
      name: {{ include "igw.secretName" .root }}
      key: {{ .name }}
      optional: {{ .optional }}
{{- end -}}

{{/*
Non-root, read-only root filesystem, no privilege: the image's user is node (1000:1000), and
the only paths written at run time are volumes (/tmp everywhere, /app/.data for the gateway).
*/}}
{{- define "igw.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
fsGroup: 1000
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "igw.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 1000
runAsGroup: 1000
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
capabilities:
  drop: [ALL]
{{- end -}}
