/** The event catalogue (docs/webhooks.md says what each event means). */
export const EVENT_TYPES = [
  "device.enrolled",
  "device.suspended",
  "device.unsuspended",
  "device.wipe_requested",
  "device.wiped",
  "device.deleted",
  "device.retired",
  "device.unenrolled",
  "device.updated",
  "device.offline",
  "device.compliance_changed",
  "policy.created",
  "policy.updated",
  "policy.deleted",
  "policy.assigned",
  "webhook.test",
  "gdpr.request_completed",
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value);
}
