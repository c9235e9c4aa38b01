/** Webhook adapter: signed JSON event delivery with retries. */
export {
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  WEBHOOK_EVENTS,
  sendWebhook,
  signWebhookBody,
  verifyWebhookSignature,
  type WebhookEvent,
  type WebhookRequest,
  type WebhookResult,
} from './webhook.js';
