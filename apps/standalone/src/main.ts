import { runUntilSignal } from '@igw/platform';
import { startStandalone } from './standalone';

void runUntilSignal('standalone', async () => {
  const demo = process.argv.includes('--demo');
  const running = await startStandalone({ demo });
  const lines = [
    '',
    'Inference gateway is running (standalone).',
    `  gateway (base_url):     ${running.gatewayUrl}    Swagger UI: ${running.gatewayUrl}/docs`,
    `  billing (billing_url):  ${running.billingUrl}    Swagger UI: ${running.billingUrl}/docs`,
    `  admin token:            ${running.adminTokenFile ? `in ${running.adminTokenFile}` : 'from ADMIN_TOKEN'}`,
  ];
  if (running.demoKey) {
    lines.push(
      `  demo API key:           ${running.demoKey}`,
      '',
      'Try it:',
      `  curl ${running.gatewayUrl}/v1/chat/completions -H "Authorization: Bearer ${running.demoKey}" \\`,
      `       -H "Content-Type: application/json" -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}'`,
    );
  }
  lines.push('', 'Press Ctrl-C to stop.', '');
  process.stdout.write(lines.join('\n'));
  return running.stop;
});
