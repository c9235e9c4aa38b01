import { useState, type FormEvent } from 'react';
import { ErrorNotice } from '../components/bits';
import { useLogin } from '../session';

export function LoginPage() {
  const { password, mfa } = useLogin();
  const [username, setUsername] = useState('');
  const [secret, setSecret] = useState('');
  const [mfaToken, setMfaToken] = useState<string | null>(null);
  const [code, setCode] = useState('');

  const submitPassword = async (event: FormEvent) => {
    event.preventDefault();
    const answer = await password.mutateAsync({ username, password: secret }).catch(() => null);
    if (answer?.mfa_required) setMfaToken(answer.mfa_token);
  };
  const submitCode = (event: FormEvent) => {
    event.preventDefault();
    if (mfaToken) mfa.mutate({ mfa_token: mfaToken, code });
  };

  return (
    <main id="main" className="login">
      <h1>Tollgate</h1>
      {mfaToken === null ? (
        <form onSubmit={submitPassword} aria-label="Log in">
          <label htmlFor="username">Username</label>
          <input id="username" name="username" autoComplete="username" required value={username} onChange={(e) => setUsername(e.target.value)} />
          <label htmlFor="password">Password</label>
          <input id="password" name="password" type="password" autoComplete="current-password" required value={secret} onChange={(e) => setSecret(e.target.value)} />
          <ErrorNotice error={password.error} />
          <button type="submit" disabled={password.isPending}>Log in</button>
        </form>
      ) : (
        <form onSubmit={submitCode} aria-label="Two-factor code">
          <p>This account uses two-factor authentication. Enter the 6-digit code from your authenticator app.</p>
          <label htmlFor="otp">Authentication code</label>
          <input id="otp" name="otp" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" maxLength={6} required autoFocus value={code} onChange={(e) => setCode(e.target.value.trim())} />
          <ErrorNotice error={mfa.error} />
          <button type="submit" disabled={mfa.isPending}>Verify</button>
          <button type="button" className="secondary" onClick={() => { setMfaToken(null); setCode(''); mfa.reset(); }}>Back</button>
        </form>
      )}
    </main>
  );
}
