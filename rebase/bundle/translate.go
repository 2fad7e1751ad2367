package bundle

import (
	"fmt"
	"sort"
	"strings"

	"github.com/operator-framework/api/pkg/operators/v1alpha1"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/lvms-rebase/lvms-rebase/applier/jsonvalue"
	"github.com/lvms-rebase/lvms-rebase/applier/releasefile"
	"github.com/lvms-rebase/lvms-rebase/internal/imageref"
	"github.com/lvms-rebase/lvms-rebase/internal/kinds"
	"github.com/lvms-rebase/lvms-rebase/rebase/era"
)

// InjectCABundleAnnotation makes OpenShift's service-ca operator fill the webhook's caBundle
// (MicroShift runs service-ca; OLM would inject its own CA instead).
const InjectCABundleAnnotation = "service.beta.openshift.io/inject-cabundle"

// NamespaceNameLabel is set by the API server on every Namespace to its name, so a selector on
// it always matches the target namespace (MicroShift's legacy `namespace` label never did).
const NamespaceNameLabel = "kubernetes.io/metadata.name"

// VersionConfigMap is the ConfigMap (namespace/name) carrying the shipped bundle's version tag.
const (
	VersionConfigMapNamespace = "kube-public"
	VersionConfigMapName      = "lvms-version"
)

// Options tunes Translate.
type Options struct {
	// Namespace overrides the target namespace. Default: the era's Namespace, then the CSV's
	// operatorframework.io/suggested-namespace annotation.
	Namespace string
	// VersionTag is the bundle image tag (e.g. v4.17.0-43) written to ConfigMap
	// kube-public/lvms-version as data.version. Default: "v" + spec.version.
	VersionTag string
	// Warnf, when set, receives every warning as it is produced (they are also returned in
	// Result.Warnings).
	Warnf func(format string, args ...interface{})
}

// Image is one bundle image the era ships.
type Image struct {
	// Name is the CSV relatedImages name (e.g. lvms-operator).
	Name string `json:"name"`
	// Key is the release-JSON key (e.g. lvms_operator).
	Key string `json:"key"`
	// Ref is the relatedImages reference: a manifest-list digest reference; per-arch child
	// digests are resolved by the image source.
	Ref string `json:"ref"`
	// Undeclared is true for a relatedImage the era table does not name: its key comes from
	// era.DerivedKey and the run warns about it.
	Undeclared bool `json:"undeclared,omitempty"`
}

// Excluded is a bundle or CSV-derived object the era does not ship.
type Excluded struct {
	// File is the bundle file it came from (the CSV file for CSV-derived objects).
	File string `json:"file"`
	// Kind is the object kind, or "clusterPermissions"/"permissions" for a whole CSV entry.
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// Result is the translation of a bundle for one era.
type Result struct {
	// Namespace is the target namespace used for namespaced objects.
	Namespace string
	// Objects in a fixed kind order (CRDs, ServiceAccounts, RBAC, ConfigMaps, Services,
	// Deployments, webhook configurations), then by namespace and name.
	Objects []*unstructured.Unstructured
	// Images: the era's BundleImages in their order, then every other relatedImage in CSV
	// order (Undeclared).
	Images []Image
	// Excluded objects, in input order.
	Excluded []Excluded
	// Warnings in the order they were produced.
	Warnings []string
	// Notes are facts of the translation the era declares (a CSV's suggested namespace
	// MicroShift does not use), for a reader who asks (-v 1); never warnings.
	Notes []string
}

// bundleKinds says how each kind a bundle may carry besides the CSV is handled: true = can be
// shipped (namespaced or not is decided by kinds.ClusterScoped), false = known but never shipped by
// MicroShift (monitoring objects need Prometheus Operator, which MicroShift lacks). Any other
// kind fails the translation: a new kind in a bundle needs a decision, not silent dropping.
var bundleKinds = map[string]bool{
	"CustomResourceDefinition": true,
	"Service":                  true,
	"ServiceAccount":           true,
	"Role":                     true,
	"RoleBinding":              true,
	"ClusterRole":              true,
	"ClusterRoleBinding":       true,
	"ConfigMap":                true,
	"PrometheusRule":           false,
	"ServiceMonitor":           false,
}

type translator struct {
	b    *Bundle
	e    era.Era
	opts Options
	ns   string
	res  *Result
	// placeholders maps a relatedImages ref of a shipped image to its template placeholder,
	// byDigest its digest (the same image named through another repository).
	placeholders map[string]string
	byDigest     map[string]string
}

// Translate turns a bundle into the objects and images an era of MicroShift ships. Objects
// derived from the CSV follow what OLM would create:
//
//   - per clusterPermissions entry: ServiceAccount, ClusterRole and ClusterRoleBinding;
//   - per permissions entry: ServiceAccount (one per name), Role and RoleBinding;
//   - per deployment: an apps/v1 Deployment;
//   - per webhook definition: a Validating/MutatingWebhookConfiguration.
//
// Every reference to a shipped bundle image, wherever it appears in a shipped object (a
// container image, any env value, an argument, an annotation, ConfigMap data), is replaced
// by its release-JSON placeholder {{ .ReleaseImage.<key> }}; render refuses what is left.
//
// RBAC objects are named after their service account, as MicroShift always did; a second
// entry for the same service account gets "-2", a third "-3", and so on, so names stay stable
// for the common single-entry case and never collide (OLM would use generated names).
// Webhook configurations are named "<generateName>-<deploymentName>" (MicroShift's name).
func Translate(b *Bundle, e era.Era, opts Options) (*Result, error) {
	if b == nil || b.CSV == nil {
		return nil, fmt.Errorf("translating bundle: no ClusterServiceVersion loaded")
	}
	t := &translator{b: b, e: e, opts: opts, res: &Result{}, placeholders: map[string]string{}, byDigest: map[string]string{}}
	if err := t.namespace(); err != nil {
		return nil, err
	}
	if err := t.images(); err != nil {
		return nil, err
	}
	t.permissions()
	if err := t.deployments(); err != nil {
		return nil, err
	}
	if err := t.webhooks(); err != nil {
		return nil, err
	}
	if err := t.bundleObjects(); err != nil {
		return nil, err
	}
	t.versionConfigMap()
	t.templateAll()
	if err := t.sortAndCheck(); err != nil {
		return nil, err
	}
	return t.res, nil
}

func (t *translator) where() string {
	return fmt.Sprintf("bundle %s (%s)", t.b.CSV.Name, t.b.CSVFile)
}

func (t *translator) warnf(format string, args ...interface{}) {
	msg := fmt.Sprintf(format, args...)
	t.res.Warnings = append(t.res.Warnings, msg)
	if t.opts.Warnf != nil {
		t.opts.Warnf("%s", msg)
	}
}

func (t *translator) namespace() error {
	switch {
	case t.opts.Namespace != "":
		t.ns = t.opts.Namespace
	case t.e.Namespace != "":
		t.ns = t.e.Namespace
	default:
		t.ns = t.b.CSV.Annotations[SuggestedNamespaceAnnotation]
	}
	if t.ns == "" {
		return fmt.Errorf("%s: no target namespace: no override, era %s declares none and metadata.annotations[%s] is empty",
			t.where(), t.e.Name, SuggestedNamespaceAnnotation)
	}
	switch s := t.b.CSV.Annotations[SuggestedNamespaceAnnotation]; {
	case s == "" || s == t.ns:
	case s == t.e.SuggestedNamespace:
		// What every bundle of the era suggests: a fact of the era table, not news.
		t.res.Notes = append(t.res.Notes, fmt.Sprintf("CSV suggests namespace %s, as every bundle of era %s does; using %s", s, t.e.Name, t.ns))
	case t.e.SuggestedNamespace != "":
		t.warnf("CSV suggests namespace %s, era %s expects %s; using %s", s, t.e.Name, t.e.SuggestedNamespace, t.ns)
	default:
		t.warnf("CSV suggests namespace %s; using %s", s, t.ns)
	}
	t.res.Namespace = t.ns
	return nil
}

func (t *translator) images() error {
	related := map[string]string{}
	var order []string
	for i, ri := range t.b.CSV.Spec.RelatedImages {
		if prev, ok := related[ri.Name]; ok && prev != ri.Image {
			return fmt.Errorf("%s: spec.relatedImages[%d]: name %q appears twice with different images (%s, %s)", t.where(), i, ri.Name, prev, ri.Image)
		} else if !ok {
			order = append(order, ri.Name)
		}
		related[ri.Name] = ri.Image
	}
	var missing []string
	declared := map[string]bool{}
	for _, k := range t.e.BundleImages {
		declared[k.Name] = true
		ref, ok := related[k.Name]
		if !ok || ref == "" {
			missing = append(missing, k.Name)
			continue
		}
		t.addImage(Image{Name: k.Name, Key: k.Key, Ref: ref})
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s: spec.relatedImages lacks %s required by era %s", t.where(), strings.Join(missing, ", "), t.e.Name)
	}
	unshipped := map[string]string{}
	for _, u := range t.e.UnshippedImages {
		unshipped[u.Name] = u.Why
	}
	for _, name := range order {
		if declared[name] || related[name] == "" {
			continue
		}
		if why, ok := unshipped[name]; ok {
			t.res.Excluded = append(t.res.Excluded, Excluded{File: t.b.CSVFile, Kind: "relatedImage", Name: name,
				Reason: fmt.Sprintf("declared unshipped by era %s: %s", t.e.Name, why)})
			continue
		}
		img := Image{Name: name, Key: era.DerivedKey(name), Ref: related[name], Undeclared: true}
		t.warnf("%s: relatedImage %s (%s) is not declared by era %s; writing it to the release JSONs as %q (key rule: name with '-' replaced by '_'); declare it in rebase/era once MicroShift ships it",
			t.b.CSVFile, name, img.Ref, t.e.Name, img.Key)
		t.addImage(img)
	}
	return t.checkKeys()
}

func (t *translator) addImage(img Image) {
	t.res.Images = append(t.res.Images, img)
	p := releasefile.Placeholder(img.Key)
	if _, dup := t.placeholders[img.Ref]; !dup {
		t.placeholders[img.Ref] = p
	}
	if d := imageref.DigestOf(img.Ref); d != "" {
		if _, dup := t.byDigest[d]; !dup {
			t.byDigest[d] = p
		}
	}
}

// placeholder is the template of a shipped image reference: by the reference itself, else
// by its digest (a pinned image is the same image whatever repository names it).
func (t *translator) placeholder(r imageref.Ref) (string, bool) {
	if p, ok := t.placeholders[r.Ref]; ok {
		return p, true
	}
	if r.Digest == "" {
		return "", false
	}
	p, ok := t.byDigest[r.Digest]
	return p, ok
}

// templateAll replaces every reference to a shipped image in every string of every object
// by its placeholder: an operator finds its images by env vars named any way
// (RELATED_IMAGE_*), by arguments or annotations, and a literal digest in an asset would
// bypass the per-arch digests of the release JSONs.
func (t *translator) templateAll() {
	for _, o := range t.res.Objects {
		imageref.Strings(o.Object, func(_, s string) string {
			out, _ := imageref.Replace(s, t.placeholder)
			return out
		})
	}
}

// checkKeys rejects two images whose template names collide (MicroShift turns '-' into '_'
// when it loads the release JSON, so "a-b" and "a_b" would overwrite each other).
func (t *translator) checkKeys() error {
	seen := map[string]string{}
	for _, k := range t.e.PayloadImages {
		seen[releasefile.TemplateKey(k.Key)] = "payload image " + k.Name
	}
	for _, img := range t.res.Images {
		tk := releasefile.TemplateKey(img.Key)
		if prev, ok := seen[tk]; ok {
			return fmt.Errorf("%s: relatedImage %s: release key %q collides with %s", t.where(), img.Name, img.Key, prev)
		}
		seen[tk] = "relatedImage " + img.Name
	}
	return nil
}

func (t *translator) saAllowed(sa string) bool {
	if t.e.CSV.ServiceAccounts == nil {
		return true
	}
	for _, s := range t.e.CSV.ServiceAccounts {
		if s == sa {
			return true
		}
	}
	return false
}

func (t *translator) add(obj map[string]interface{}) {
	t.res.Objects = append(t.res.Objects, &unstructured.Unstructured{Object: obj})
}

func (t *translator) permissions() {
	spec := t.b.CSV.Spec.InstallStrategy.StrategySpec
	seenSA := map[string]bool{}
	addSA := func(sa string) {
		if seenSA[sa] {
			return
		}
		seenSA[sa] = true
		t.add(map[string]interface{}{
			"apiVersion": "v1", "kind": "ServiceAccount",
			"metadata": map[string]interface{}{"name": sa, "namespace": t.ns},
		})
	}
	for _, group := range []struct {
		field                 string
		perms                 []v1alpha1.StrategyDeploymentPermissions
		roleKind, bindingKind string
	}{
		{"clusterPermissions", spec.ClusterPermissions, "ClusterRole", "ClusterRoleBinding"},
		{"permissions", spec.Permissions, "Role", "RoleBinding"},
	} {
		count := map[string]int{}
		for _, p := range group.perms {
			sa := p.ServiceAccountName
			if !t.saAllowed(sa) {
				t.res.Excluded = append(t.res.Excluded, Excluded{File: t.b.CSVFile, Kind: group.field, Name: sa,
					Reason: fmt.Sprintf("era %s ships RBAC only for service accounts %s", t.e.Name, strings.Join(t.e.CSV.ServiceAccounts, ", "))})
				continue
			}
			addSA(sa)
			count[sa]++
			name := sa
			if count[sa] > 1 {
				name = fmt.Sprintf("%s-%d", sa, count[sa])
				t.warnf("%s: service account %s has %d %s entries; naming this one %s", t.b.CSVFile, sa, count[sa], group.field, name)
			}
			roleMeta := map[string]interface{}{"name": name}
			if group.roleKind == "Role" {
				roleMeta["namespace"] = t.ns
			}
			bindingMeta := map[string]interface{}{"name": name}
			if group.bindingKind == "RoleBinding" {
				bindingMeta["namespace"] = t.ns
			}
			t.add(map[string]interface{}{
				"apiVersion": rbacv1.SchemeGroupVersion.String(), "kind": group.roleKind,
				"metadata": roleMeta,
				"rules":    rulesValue(p.Rules),
			})
			t.add(map[string]interface{}{
				"apiVersion": rbacv1.SchemeGroupVersion.String(), "kind": group.bindingKind,
				"metadata": bindingMeta,
				"roleRef":  map[string]interface{}{"apiGroup": rbacv1.GroupName, "kind": group.roleKind, "name": name},
				"subjects": []interface{}{map[string]interface{}{"kind": "ServiceAccount", "name": sa, "namespace": t.ns}},
			})
		}
	}
	if t.e.CSV.Deployments {
		for _, d := range spec.DeploymentSpecs {
			sa := d.Spec.Template.Spec.ServiceAccountName
			if sa != "" && !seenSA[sa] {
				t.warnf("%s: deployment %s runs as service account %s, which has no permissions entry; creating it", t.b.CSVFile, d.Name, sa)
				addSA(sa)
			}
		}
	}
}

func (t *translator) deployments() error {
	for i, d := range t.b.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if !t.e.CSV.Deployments {
			t.res.Excluded = append(t.res.Excluded, Excluded{File: t.b.CSVFile, Kind: "Deployment", Name: d.Name,
				Reason: fmt.Sprintf("era %s does not ship the CSV's deployments", t.e.Name)})
			continue
		}
		spec := d.Spec.DeepCopy()
		if err := t.templateImages(fmt.Sprintf("spec.install.spec.deployments[%d] (%s)", i, d.Name), &spec.Template.Spec); err != nil {
			return err
		}
		meta := map[string]interface{}{"name": d.Name, "namespace": t.ns}
		if len(d.Label) > 0 {
			labels := map[string]interface{}{}
			for k, v := range d.Label {
				labels[k] = v
			}
			meta["labels"] = labels
		}
		specMap := toJSONValue(spec)
		t.add(map[string]interface{}{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"metadata": meta,
			"spec":     specMap,
		})
	}
	return nil
}

// templateImages replaces every container image with its release-JSON placeholder; an image
// that is no shipped relatedImage cannot be templated and fails the translation. Every other
// reference (env values, arguments) is templated with the rest of the object (templateAll).
func (t *translator) templateImages(where string, pod *corev1.PodSpec) error {
	for _, cs := range [][]corev1.Container{pod.InitContainers, pod.Containers} {
		for j := range cs {
			c := &cs[j]
			p, ok := t.placeholders[c.Image]
			if refs := imageref.Find(c.Image); !ok && len(refs) == 1 && refs[0].Ref == c.Image {
				p, ok = t.placeholder(refs[0]) // the same digest through another repository
			}
			if !ok {
				return fmt.Errorf("%s: %s container %s: image %s is not in spec.relatedImages; expected every container image to be a relatedImage so that it can be templated",
					t.b.CSVFile, where, c.Name, c.Image)
			}
			c.Image = p
		}
	}
	return nil
}

func (t *translator) webhooks() error {
	for i, w := range t.b.CSV.Spec.WebhookDefinitions {
		kind := "ValidatingWebhookConfiguration"
		if w.Type == v1alpha1.MutatingAdmissionWebhook {
			kind = "MutatingWebhookConfiguration"
		}
		name := w.GenerateName + "-" + w.DeploymentName
		if !t.e.CSV.Webhooks {
			t.res.Excluded = append(t.res.Excluded, Excluded{File: t.b.CSVFile, Kind: kind, Name: name,
				Reason: fmt.Sprintf("era %s does not ship the CSV's webhooks", t.e.Name)})
			continue
		}
		if why, ok := unshippedWebhook(t.e, w.GenerateName); ok {
			t.res.Excluded = append(t.res.Excluded, Excluded{File: t.b.CSVFile, Kind: kind, Name: name,
				Reason: fmt.Sprintf("declared unshipped by era %s: %s", t.e.Name, why)})
			continue
		}
		svc, err := t.webhookService(i, w)
		if err != nil {
			return err
		}
		// OLM builds the webhook from the description (operator-framework/api); MicroShift
		// differs in the Service it names, the port default and the caBundle, which service-ca
		// injects instead of OLM.
		nsSel := &metav1.LabelSelector{MatchLabels: map[string]string{NamespaceNameLabel: t.ns}}
		var hook interface{}
		var ref *admissionregistrationv1.ServiceReference
		if kind == "ValidatingWebhookConfiguration" {
			h := w.GetValidatingWebhook(t.ns, nsSel, nil)
			hook, ref = &h, h.ClientConfig.Service
		} else {
			h := w.GetMutatingWebhook(t.ns, nsSel, nil)
			hook, ref = &h, h.ClientConfig.Service
		}
		ref.Namespace, ref.Name = svc.Namespace, svc.Name
		ref.Port = &svc.Port
		t.add(map[string]interface{}{
			"apiVersion": admissionregistrationv1.SchemeGroupVersion.String(), "kind": kind,
			"metadata": map[string]interface{}{
				"name":        name,
				"annotations": map[string]interface{}{InjectCABundleAnnotation: "true"},
			},
			"webhooks": []interface{}{toJSONValue(hook)},
		})
	}
	return nil
}

// webhookService finds the shipped bundle Service that selects the webhook's deployment and
// forwards containerPort to targetPort, else the era's mapping to a Service MicroShift runs.
// Without either the webhook would call a Service nothing creates (OLM creates
// "<deployment>-service", MicroShift does not) and every matching request would fail: the
// translation fails, naming what the bundle provides.
func (t *translator) webhookService(i int, w v1alpha1.WebhookDescription) (era.WebhookService, error) {
	var dep *v1alpha1.StrategyDeploymentSpec
	for j := range t.b.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		if d := &t.b.CSV.Spec.InstallStrategy.StrategySpec.DeploymentSpecs[j]; d.Name == w.DeploymentName {
			dep = d
		}
	}
	if dep == nil {
		return era.WebhookService{}, fmt.Errorf("%s: spec.webhookdefinitions[%d].deploymentName %q: missing deployment", t.where(), i, w.DeploymentName)
	}
	port := w.ContainerPort
	if port == 0 {
		port = 443 // OLM's default
	}
	target := intstr.FromInt32(port)
	if w.TargetPort != nil {
		target = *w.TargetPort
	}
	matches, provided, err := t.servicesFor(dep, port, target)
	if err != nil {
		return era.WebhookService{}, err
	}
	switch {
	case len(matches) > 1:
		t.warnf("%s: Services %s all select deployment %s on port %d for webhook %s; using %s",
			t.b.CSVFile, strings.Join(matches, ", "), w.DeploymentName, port, w.GenerateName, matches[0])
		fallthrough
	case len(matches) == 1:
		return era.WebhookService{Namespace: t.ns, Name: matches[0], Port: port}, nil
	}
	for _, m := range t.e.WebhookServices {
		if m.Webhook == w.GenerateName {
			if m.Port == 0 {
				m.Port = 443
			}
			return m, nil
		}
	}
	if len(provided) == 0 {
		provided = []string{"no Service"}
	}
	return era.WebhookService{}, fmt.Errorf("%s: spec.webhookdefinitions[%d]: webhook %s of deployment %s needs a Service selecting %s on port %d→%s "+
		"(OLM would create %s/%s-service; MicroShift does not), and no shipped file creates one; the bundle provides %s. "+
		"Add the Service to the bundle, map the webhook to a Service MicroShift runs (era %s WebhookServices) or declare it unshipped (UnshippedWebhooks)",
		t.b.CSVFile, i, w.GenerateName, w.DeploymentName, labelString(dep.Spec.Template.Labels), port, target.String(),
		t.ns, w.DomainName(), strings.Join(provided, "; "), t.e.Name)
}

// servicesFor returns the names of the shipped bundle Services that select dep and forward
// port to target, sorted, and a description of every bundle Service for error messages.
func (t *translator) servicesFor(dep *v1alpha1.StrategyDeploymentSpec, port int32, target intstr.IntOrString) (matches, provided []string, err error) {
	podLabels := dep.Spec.Template.Labels
	for _, o := range t.b.Objects {
		if o.Object.GetKind() != "Service" {
			continue
		}
		var svc corev1.Service
		if err := jsonvalue.ToTyped(o.Object.Object, &svc); err != nil {
			return nil, nil, fmt.Errorf("%s: decoding Service: %w", o.File, err)
		}
		var ports []string
		for _, p := range svc.Spec.Ports {
			ports = append(ports, fmt.Sprintf("%d→%s", p.Port, p.TargetPort.String()))
		}
		shipped := t.e.IncludesBundleObject("Service", svc.Name)
		desc := fmt.Sprintf("Service %s (%s) selecting %s on ports %s", svc.Name, o.File, labelString(svc.Spec.Selector), strings.Join(ports, ", "))
		if !shipped {
			desc += ", not shipped by era " + t.e.Name
		}
		provided = append(provided, desc)
		if !shipped || len(svc.Spec.Selector) == 0 || !selects(svc.Spec.Selector, podLabels) {
			continue
		}
		for _, p := range svc.Spec.Ports {
			if p.Port == port && t.samePort(dep, p.TargetPort, p.Port, target) {
				matches = append(matches, svc.Name)
				break
			}
		}
	}
	sort.Strings(matches)
	return matches, provided, nil
}

func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func labelString(m map[string]string) string {
	var kv []string
	for k, v := range m {
		kv = append(kv, k+"="+v)
	}
	sort.Strings(kv)
	if len(kv) == 0 {
		return "nothing"
	}
	return strings.Join(kv, ",")
}

// unshippedWebhook returns why the era leaves a webhook (by generateName) out.
func unshippedWebhook(e era.Era, generateName string) (string, bool) {
	for _, u := range e.UnshippedWebhooks {
		if u.Name == generateName {
			return u.Why, true
		}
	}
	return "", false
}

// samePort reports whether a Service port's targetPort reaches the webhook's targetPort,
// resolving named ports through the deployment's containers.
func (t *translator) samePort(dep *v1alpha1.StrategyDeploymentSpec, svcTarget intstr.IntOrString, svcPort int32, want intstr.IntOrString) bool {
	resolve := func(v intstr.IntOrString) int32 {
		if v.Type == intstr.Int {
			return v.IntVal
		}
		for _, c := range dep.Spec.Template.Spec.Containers {
			for _, cp := range c.Ports {
				if cp.Name == v.StrVal {
					return cp.ContainerPort
				}
			}
		}
		return -1
	}
	if svcTarget.Type == intstr.Int && svcTarget.IntVal == 0 && svcTarget.StrVal == "" {
		svcTarget = intstr.FromInt32(svcPort) // Kubernetes' default targetPort
	}
	got, w := resolve(svcTarget), resolve(want)
	return got >= 0 && got == w
}

func (t *translator) bundleObjects() error {
	for _, o := range t.b.Objects {
		kind, name := o.Object.GetKind(), o.Object.GetName()
		shippable, known := bundleKinds[kind]
		if !known {
			// A kind MicroShift has never shipped (e.g. a NetworkPolicy): reported, not fatal;
			// shipping it is a decision (bundleKinds and the era include list).
			t.res.Excluded = append(t.res.Excluded, Excluded{File: o.File, Kind: kind, Name: name,
				Reason: fmt.Sprintf("kind %s is not shipped by MicroShift (not in era %s include list)", kind, t.e.Name)})
			t.warnf("%s: bundle carries %s %s, a kind no era ships; left out", o.File, kind, name)
			continue
		}
		if !t.e.IncludesBundleObject(kind, name) {
			t.res.Excluded = append(t.res.Excluded, Excluded{File: o.File, Kind: kind, Name: name,
				Reason: fmt.Sprintf("not in era %s include list", t.e.Name)})
			continue
		}
		if !shippable {
			return fmt.Errorf("bundle %s: %s: era %s includes %s %s, which MicroShift cannot ship", t.b.CSV.Name, o.File, t.e.Name, kind, name)
		}
		obj := o.Object.DeepCopy().Object
		meta, _ := obj["metadata"].(map[string]interface{})
		if meta == nil {
			return fmt.Errorf("bundle %s: %s: metadata is not an object", t.b.CSV.Name, o.File)
		}
		if kind == "CustomResourceDefinition" {
			// CRDs are shipped as the bundle has them.
			delete(meta, "namespace")
			t.add(obj)
			continue
		}
		if meta["creationTimestamp"] == nil {
			delete(meta, "creationTimestamp")
		}
		delete(obj, "status")
		if kinds.ClusterScoped(kind) {
			delete(meta, "namespace")
		} else {
			meta["namespace"] = t.ns
		}
		if kind == "RoleBinding" || kind == "ClusterRoleBinding" {
			if rr, ok := obj["roleRef"].(map[string]interface{}); ok {
				delete(rr, "namespace") // not a RoleRef field
			}
			if subs, ok := obj["subjects"].([]interface{}); ok {
				for _, s := range subs {
					if sm, ok := s.(map[string]interface{}); ok && sm["kind"] == "ServiceAccount" && sm["namespace"] == nil {
						sm["namespace"] = t.ns
					}
				}
			}
		}
		t.add(obj)
	}
	return nil
}

func (t *translator) versionConfigMap() {
	v := t.opts.VersionTag
	if v == "" {
		v = "v" + t.b.Version
	}
	t.add(map[string]interface{}{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]interface{}{"name": VersionConfigMapName, "namespace": VersionConfigMapNamespace},
		"data":     map[string]interface{}{"version": v},
	})
}

func (t *translator) sortAndCheck() error {
	objs := t.res.Objects
	sort.SliceStable(objs, func(i, j int) bool {
		a, b := objs[i], objs[j]
		// The applier's apply order, the one both sides share (kinds.Rank).
		if ra, rb := kinds.Rank(a.GetKind()), kinds.Rank(b.GetKind()); ra != rb {
			return ra < rb
		}
		if a.GetNamespace() != b.GetNamespace() {
			return a.GetNamespace() < b.GetNamespace()
		}
		return a.GetName() < b.GetName()
	})
	for i := 1; i < len(objs); i++ {
		a, b := objs[i-1], objs[i]
		if a.GetKind() == b.GetKind() && a.GetNamespace() == b.GetNamespace() && a.GetName() == b.GetName() {
			return fmt.Errorf("%s: two %s objects named %s/%s (a bundle manifest collides with a CSV-derived object)",
				t.where(), a.GetKind(), a.GetNamespace(), a.GetName())
		}
	}
	return nil
}

// toJSONValue converts a pointer to a typed API value to its unstructured form (see
// jsonvalue.FromTyped).
func toJSONValue(ptr interface{}) map[string]interface{} {
	m, err := jsonvalue.FromTyped(ptr)
	if err != nil {
		// Values here are pointers to k8s API types, which always convert.
		panic(err.Error())
	}
	return m
}

// rulesValue converts policy rules to their unstructured form.
func rulesValue(rules []rbacv1.PolicyRule) []interface{} {
	out := make([]interface{}, 0, len(rules))
	for i := range rules {
		out = append(out, toJSONValue(&rules[i]))
	}
	return out
}
