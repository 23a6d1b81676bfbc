// The footer's newsletter controls, there to show the tracking plan (demo/tracking-plan.json) at work: one sends the
// planned `Newsletter Subscribed`, the other the same event misspelt, as a typo in a site's code would. The collector
// started by `svc-analytics start` checks the demo's plan: the inspector shows the violation beside that message.
const analytics = () => window.analytics;

function mount() {
  const foot = document.querySelector('footer.foot');
  if (!foot) return;
  const p = document.createElement('p');
  p.className = 'plan-demo';
  p.innerHTML = `Newsletter: <button type="button" data-testid="subscribe">Subscribe</button>
    <button type="button" data-testid="off-plan" title="Sends &quot;Newsletter subscribed&quot;: a lower-case s the tracking plan does not list">Send an event off the plan</button>
    <span>(the inspector shows what the tracking plan expected)</span>`;
  const [subscribe, offPlan] = p.querySelectorAll('button');
  subscribe.addEventListener('click', () => analytics().track('Newsletter Subscribed', { source: 'footer' }));
  offPlan.addEventListener('click', () => analytics().track('Newsletter subscribed', { source: 'footer' }));
  foot.append(p);
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', mount);
else mount();
