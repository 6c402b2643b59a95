// Mail to people: password-reset links and the notice of an email change. With QUARRY_SMTP_URL
// (`smtp://user:password@host:587`, `smtps://…:465`) it goes out through nodemailer, loaded only
// then; without it the gateway has no way to reach anyone, so each message is written to the log
// at `warn` for the operator to pass on (a one-machine install has one person: its operator).
import type { Logger } from '../observability/logger.js';

export interface MailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
}

export interface Mailer {
  /** Whether messages really leave (SMTP), or only reach the operator's log. */
  readonly delivers: boolean;
  send(message: MailMessage): Promise<void>;
  /** Sends without waiting: a failure is logged, never thrown (a notice must not fail what it tells of). */
  sendLater(message: MailMessage): void;
}

export interface MailerOptions {
  /** QUARRY_SMTP_URL, or undefined: the log. */
  readonly smtpUrl: string | undefined;
  /** QUARRY_MAIL_FROM: the sender of every message. */
  readonly from: string;
  readonly logger: Pick<Logger, 'warn' | 'error'>;
}

export function createMailer(options: MailerOptions): Mailer {
  const { smtpUrl, from, logger } = options;
  const later = (send: Mailer['send']) => (message: MailMessage) => {
    send(message).catch((error: unknown) => {
      logger.error({ err: error, mail: { to: message.to, subject: message.subject } }, 'mail not sent');
    });
  };
  if (smtpUrl === undefined) {
    const send: Mailer['send'] = async (message) => {
      logger.warn(
        { mail: { to: message.to, subject: message.subject, text: message.text } },
        'mail not sent (no QUARRY_SMTP_URL): pass it on to its recipient',
      );
    };
    return { delivers: false, send, sendLater: later(send) };
  }
  let transport: Promise<{ sendMail(mail: object): Promise<unknown> }> | undefined;
  const send: Mailer['send'] = async (message) => {
    transport ??= import('nodemailer').then((nodemailer) =>
      // A hung mail server must not hold anyone long: callers do not wait for mail anyway.
      nodemailer.createTransport({ url: smtpUrl, connectionTimeout: 10_000, socketTimeout: 20_000 }),
    );
    await (await transport).sendMail({ from, to: message.to, subject: message.subject, text: message.text });
  };
  return { delivers: true, send, sendLater: later(send) };
}
